package redisproto

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tlsClient opens TLS connections as PHP's stream layer does with the
// same SSL context options: its files are read once, when the client is
// made, so a missing or unreadable one is an error at start.
type tlsClient struct {
	opts  TLSOptions
	roots *x509.CertPool // nil: the system's
	certs []tls.Certificate
}

// newTLSClient reads the options' certificate files.
func newTLSClient(o TLSOptions) (*tlsClient, error) {
	c := &tlsClient{opts: o}
	if o.CAFile != "" || o.CAPath != "" {
		pool, err := caPool(o.CAFile, o.CAPath)
		if err != nil {
			return nil, err
		}
		c.roots = pool
	}
	if o.LocalCert == "" {
		if o.LocalPK != "" {
			return nil, errors.New("local_pk is set without local_cert")
		}
		return c, nil
	}
	cert, err := clientCertificate(o.LocalCert, o.LocalPK)
	if err != nil {
		return nil, err
	}
	c.certs = []tls.Certificate{cert}
	return c, nil
}

// caPool is the certificates of cafile and of every file in capath (PHP
// hands both to OpenSSL, which reads capath's hashed names; here every
// PEM file there counts).
func caPool(file, dir string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("cafile: %w", err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("cafile %s holds no PEM certificate", file)
		}
	}
	if dir == "" {
		return pool, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("capath: %w", err)
	}
	found := false
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && pool.AppendCertsFromPEM(b) {
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("capath %s holds no PEM certificate", dir)
	}
	return pool, nil
}

// clientCertificate is local_cert with its key, from local_pk or, when
// that is empty, from local_cert itself.
func clientCertificate(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("local_cert: %w", err)
	}
	keyPEM, keyName := certPEM, "local_cert"
	if keyFile != "" {
		if keyPEM, err = os.ReadFile(keyFile); err != nil {
			return tls.Certificate{}, fmt.Errorf("local_pk: %w", err)
		}
		keyName = "local_pk"
	}
	if encryptedKey(keyPEM) {
		return tls.Certificate{}, fmt.Errorf("the private key in %s is encrypted (passphrase); Go reads unencrypted keys only: decrypt it (openssl pkey -in KEY -out KEY.plain) and name that file", keyName)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The error names the PEM problem, never the key's bytes.
		return tls.Certificate{}, fmt.Errorf("local_cert %s with its key: %w", certFile, err)
	}
	return cert, nil
}

// encryptedKey reports a PEM private key PHP would decrypt with a
// passphrase: PKCS#8 "ENCRYPTED PRIVATE KEY", or a legacy block with a
// Proc-Type ENCRYPTED header.
func encryptedKey(b []byte) bool {
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return false
		}
		if block.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(block.Headers["Proc-Type"], "ENCRYPTED") {
			return true
		}
	}
}

// config is the tls.Config of one connection to host. Go's own checks
// are off: verify does PHP's, which differ (the name is checked even when
// the chain is not; a self-signed certificate may be allowed; the common
// name counts).
func (c *tlsClient) config(host string) *tls.Config {
	name := c.opts.PeerName
	if name == "" {
		name = host
	}
	conf := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		Certificates:       c.certs,
		InsecureSkipVerify: true, // verify below makes PHP's checks; the handshake fails when they do
		VerifyConnection:   func(cs tls.ConnectionState) error { return c.verify(cs, name) },
	}
	if c.opts.MinVersion != 0 {
		conf.MinVersion, conf.MaxVersion = c.opts.MinVersion, c.opts.MaxVersion
	}
	// PHP sends the peer name as SNI unless it is an IP address.
	if !c.opts.NoSNI && net.ParseIP(name) == nil {
		conf.ServerName = name
	}
	return conf
}

// verify makes PHP's checks of the server's certificate
// (php_openssl_apply_peer_verification_policy): the chain unless
// verify_peer is off, then the name unless verify_peer_name is off.
func (c *tlsClient) verify(cs tls.ConnectionState, name string) error {
	if c.opts.NoVerifyPeer && c.opts.NoVerifyPeerName {
		return nil
	}
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the server sent no certificate")
	}
	leaf := cs.PeerCertificates[0]
	if !c.opts.NoVerifyPeer {
		inter := x509.NewCertPool()
		for _, cert := range cs.PeerCertificates[1:] {
			inter.AddCert(cert)
		}
		_, err := leaf.Verify(x509.VerifyOptions{Roots: c.roots, Intermediates: inter})
		if err != nil && !(c.opts.AllowSelfSigned && selfSigned(leaf)) {
			return fmt.Errorf("the server's certificate: %w (set cafile to the CA that signed it, or verify_peer => false)", err)
		}
	}
	if !c.opts.NoVerifyPeerName && !peerNameMatches(leaf, name) {
		return fmt.Errorf("the server's certificate is not for %q (peer_name names the name it holds)", name)
	}
	return nil
}

// selfSigned is a certificate signed by its own key (OpenSSL's
// X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, which allow_self_signed lets
// pass). CheckSignatureFrom would also want it to be a CA.
func selfSigned(cert *x509.Certificate) bool {
	return string(cert.RawIssuer) == string(cert.RawSubject) &&
		cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature) == nil
}

// peerNameMatches is PHP's name check: the subjectAltName entries (Go's
// VerifyHostname: DNS names with a leading wildcard, IP addresses), else
// the common name, which PHP still reads and Go no longer does.
func peerNameMatches(cert *x509.Certificate, name string) bool {
	if cert.VerifyHostname(name) == nil {
		return true
	}
	return wildcardMatch(cert.Subject.CommonName, name)
}

// wildcardMatch compares a certificate name with a host name, the name's
// first label possibly "*" (PHP's matches_wildcard_name, without partial
// labels such as "w*").
func wildcardMatch(pattern, name string) bool {
	if pattern == "" {
		return false
	}
	if strings.EqualFold(pattern, name) {
		return true
	}
	suffix, ok := strings.CutPrefix(pattern, "*.")
	if !ok {
		return false
	}
	_, rest, found := strings.Cut(name, ".")
	return found && strings.EqualFold(rest, suffix)
}

// dialer opens plain or TLS connections, the TLS options chosen by the
// address dialed (a Sentinel connection's sentinels and master may differ);
// tlsFor returns nil for a plain one.
type dialer struct {
	timeout time.Duration
	tlsFor  func(addr string) *tlsClient
}

// dial is go-redis's Dialer.
func (d dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	timeout := d.timeout
	if timeout <= 0 {
		timeout = 5 * time.Second // go-redis's default DialTimeout
	}
	nd := &net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute}
	conn, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := d.tlsFor(addr)
	if tc == nil {
		return conn, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tlsConn := tls.Client(conn, tc.config(host))
	if err := tlsConn.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("TLS with %s: %w", addr, err)
	}
	return tlsConn, nil
}
