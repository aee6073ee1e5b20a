package testredis

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// PKI is a certificate authority made for one test and the PEM files it
// signed, in a temporary folder: a server certificate (for the names
// given to NewPKI; redis-server also presents it as a client to its
// master and sentinels) and a client certificate for the test's clients.
type PKI struct {
	Dir string
	// CA is the authority's certificate.
	CA string
	// ServerCert and ServerKey are the servers' certificate and key.
	ServerCert, ServerKey string
	// ClientCert and ClientKey are a client's certificate and key; Client
	// holds both in one file (PHP's local_cert without local_pk).
	ClientCert, ClientKey, Client string
	// SelfCert and SelfKey are a self-signed server certificate for the
	// same hosts, signed by no CA (SelfSigned starts a server with it).
	SelfCert, SelfKey string

	ca    *x509.Certificate
	self  *x509.Certificate
	caKey *ecdsa.PrivateKey
	n     int64
}

// NewPKI makes a CA and its certificates. The server certificate names
// the hosts given (DNS names or IP addresses); none: 127.0.0.1.
func NewPKI(t testing.TB, hosts ...string) *PKI {
	t.Helper()
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1"}
	}
	p := &PKI{Dir: t.TempDir()}
	if err := p.make(hosts); err != nil {
		t.Fatalf("testredis: certificates: %v", err)
	}
	return p
}

func (p *PKI) make(hosts []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := p.template("laraworker test CA")
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	if p.ca, err = x509.ParseCertificate(der); err != nil {
		return err
	}
	p.caKey = key
	p.CA = filepath.Join(p.Dir, "ca.crt")
	if err := writePEM(p.CA, "CERTIFICATE", der); err != nil {
		return err
	}
	server := p.template("redis server")
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			server.IPAddresses = append(server.IPAddresses, ip)
		} else {
			server.DNSNames = append(server.DNSNames, h)
		}
	}
	if p.ServerCert, p.ServerKey, err = p.issue("server", server); err != nil {
		return err
	}
	if err := p.makeSelfSigned(server); err != nil {
		return err
	}
	if p.ClientCert, p.ClientKey, err = p.issue("client", p.template("laraworker test client")); err != nil {
		return err
	}
	p.Client = filepath.Join(p.Dir, "client.pem")
	return concat(p.Client, p.ClientCert, p.ClientKey)
}

// makeSelfSigned writes SelfCert and SelfKey: tmpl signed by its own key.
func (p *PKI) makeSelfSigned(tmpl *x509.Certificate) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	self := *tmpl
	self.SerialNumber = big.NewInt(1000 + p.n)
	self.Subject = pkix.Name{CommonName: "self-signed redis server"}
	der, err := x509.CreateCertificate(rand.Reader, &self, &self, &key.PublicKey, key)
	if err != nil {
		return err
	}
	if p.self, err = x509.ParseCertificate(der); err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	p.SelfCert, p.SelfKey = filepath.Join(p.Dir, "self.crt"), filepath.Join(p.Dir, "self.key")
	if err := writePEM(p.SelfCert, "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(p.SelfKey, "PRIVATE KEY", keyDER)
}

// SelfSigned is the PKI with the self-signed certificate as the servers'
// (clients still need a certificate of the CA).
func (p *PKI) SelfSigned() *PKI {
	q := *p
	q.ServerCert, q.ServerKey = p.SelfCert, p.SelfKey
	return &q
}

func (p *PKI) template(cn string) *x509.Certificate {
	p.n++
	return &x509.Certificate{
		SerialNumber: big.NewInt(p.n),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
}

// issue signs tmpl with the CA and writes NAME.crt and NAME.key.
func (p *PKI) issue(name string, tmpl *x509.Certificate) (string, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile := filepath.Join(p.Dir, name+".crt"), filepath.Join(p.Dir, name+".key")
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return "", "", err
	}
	return certFile, keyFile, writePEM(keyFile, "PRIVATE KEY", keyDER)
}

func writePEM(file, typ string, der []byte) error {
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func concat(out string, files ...string) error {
	var b []byte
	for _, f := range files {
		part, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		b = append(b, part...)
	}
	return os.WriteFile(out, b, 0o600)
}

// ClientTLS is a tls.Config that trusts the CA and presents the client
// certificate: what the test's own clients use.
func (p *PKI) ClientTLS(t testing.TB) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(p.ClientCert, p.ClientKey)
	if err != nil {
		t.Fatalf("testredis: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	pool.AddCert(p.self)
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: p.serverName(), MinVersion: tls.VersionTLS12}
}

// serverName is a name the server certificate holds.
func (p *PKI) serverName() string {
	b, _ := os.ReadFile(p.ServerCert)
	block, _ := pem.Decode(b)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || len(cert.DNSNames) == 0 {
		return "127.0.0.1"
	}
	return cert.DNSNames[0]
}

// TLSArgs are redis-server's arguments for TLS on port, with the
// plain port off and client certificates required.
func (p *PKI) TLSArgs(port int) []string {
	return []string{
		"--port", "0", "--tls-port", strconv.Itoa(port),
		"--tls-cert-file", p.ServerCert, "--tls-key-file", p.ServerKey,
		"--tls-ca-cert-file", p.CA, "--tls-auth-clients", "yes", "--tls-replication", "yes",
	}
}

// StartTLS starts a redis-server that takes TLS only, on a free loopback
// port, requiring a client certificate signed by the PKI's CA.
func StartTLS(t testing.TB, p *PKI, extra ...string) *Server {
	t.Helper()
	bin := lookPath(t, "redis-server")
	dir := t.TempDir()
	var lastErr error
	for range 5 {
		port, err := freePort(false)
		if err != nil {
			t.Fatalf("testredis: %v", err)
		}
		s := newServer(dir, port, append(p.TLSArgs(port), extra...))
		s.tls = p.ClientTLS(t)
		if lastErr = s.start(bin); lastErr == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("testredis: TLS server: %v", lastErr)
	return nil
}

// String names the PKI's folder.
func (p *PKI) String() string { return fmt.Sprintf("testredis.PKI(%s)", p.Dir) }
