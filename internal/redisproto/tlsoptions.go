package redisproto

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"

	"github.com/laraworker/laraworker/internal/phparray"
)

// TLSOptions are the SSL context options of a TLS connection as PHP's
// stream layer applies them (phpredis's "context", predis's "ssl"
// parameter; https://www.php.net/manual/en/context.ssl.php). The zero
// value is PHP's default: the server's chain is verified against the
// system's CAs and its certificate must name the host connected to.
type TLSOptions struct {
	// NoVerifyPeer is verify_peer => false: the certificate chain is not
	// checked.
	NoVerifyPeer bool
	// NoVerifyPeerName is verify_peer_name => false: the name in the
	// certificate is not checked. PHP checks the name even when
	// verify_peer is off, and so does Go.
	NoVerifyPeerName bool
	// AllowSelfSigned is allow_self_signed: a self-signed server
	// certificate passes the chain check.
	AllowSelfSigned bool
	// PeerName is peer_name, the name the certificate must hold (and the
	// SNI sent); empty: the host connected to.
	PeerName string
	// CAFile and CAPath (cafile, capath: PEM certificates, a folder of
	// them) are the CAs the chain is checked against; both empty: the
	// system's.
	CAFile, CAPath string
	// LocalCert is local_cert, the client certificate (PEM), and LocalPK
	// local_pk, its key; LocalPK empty: the key is in LocalCert, as PHP
	// allows. An encrypted key (passphrase) is refused.
	LocalCert, LocalPK string
	// NoSNI is SNI_enabled => false.
	NoSNI bool
	// MinVersion and MaxVersion are the TLS versions crypto_method (or
	// predis's crypto_type) allows; 0: TLS 1.2 and up.
	MinVersion, MaxVersion uint16
}

// sslRefused are the SSL context options PHP honours on a client that Go
// cannot: a connection with them is refused rather than made with less.
var sslRefused = []string{"ciphers", "peer_fingerprint", "verify_depth", "security_level"}

// parseSSLContext reads PHP's SSL context options as the client (phpredis
// or predis) applies them. An option PHP honours and Go cannot (ciphers,
// peer_fingerprint, verify_depth, security_level) is an error naming it,
// never silently dropped; options PHP ignores on a client, Go ignores too.
// A passphrase is not read: the key it would decrypt is refused when it is
// encrypted.
func parseSSLContext(client string, m map[string]any) (TLSOptions, error) {
	var o TLSOptions
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := o.set(client, k, m[k]); err != nil {
			return TLSOptions{}, err
		}
	}
	return o, o.checkEmpty(m)
}

// checkEmpty refuses what PHP reads as an empty string and then fails to
// connect with: a cafile it loads (verify_peer on), a local_cert, a
// peer_name it checks (verify_peer_name on). Such a value is usually an
// env() whose variable is unset (null).
func (o TLSOptions) checkEmpty(m map[string]any) error {
	for _, k := range []string{"cafile", "local_cert", "peer_name"} {
		v, set := m[k]
		if !set || phparray.String(v) != "" || (k == "cafile" && o.NoVerifyPeer) || (k == "peer_name" && o.NoVerifyPeerName) {
			continue
		}
		return fmt.Errorf("the SSL context option %s is empty (null when its variable is unset): PHP then fails to connect; set it, or remove it", k)
	}
	return nil
}

// set applies one option. PHP reads the booleans with zend_is_true, so a
// null verify_peer turns verification off, as there. The TLS versions
// come from crypto_method on phpredis (PHP's tls:// transport reads it)
// and from predis's own crypto_type on predis, which hands it to
// stream_socket_enable_crypto, where it wins over crypto_method.
func (o *TLSOptions) set(client, key string, v any) error {
	switch key {
	case "verify_peer":
		o.NoVerifyPeer = !phparray.Truthy(v)
	case "verify_peer_name":
		o.NoVerifyPeerName = !phparray.Truthy(v)
	case "allow_self_signed":
		o.AllowSelfSigned = phparray.Truthy(v)
	case "SNI_enabled":
		o.NoSNI = !phparray.Truthy(v)
	case "peer_name":
		o.PeerName = phparray.String(v)
	case "cafile":
		o.CAFile = phparray.String(v)
	case "capath":
		o.CAPath = phparray.String(v)
	case "local_cert":
		o.LocalCert = phparray.String(v)
	case "local_pk":
		o.LocalPK = phparray.String(v)
	case "crypto_method":
		if client != "predis" {
			return o.setCryptoMethod(key, v)
		}
	case "crypto_type":
		if client == "predis" {
			return o.setCryptoMethod(key, v)
		}
	default:
		if slices.Contains(sslRefused, key) {
			return fmt.Errorf("the SSL context option %q is not one Go can honour; remove it, or serve this connection with PHP workers only", key)
		}
	}
	return nil
}

// The TLS bits of PHP's STREAM_CRYPTO_METHOD_* constants
// (STREAM_CRYPTO_METHOD_TLSv1_2_CLIENT is 33: bit 5 and the client bit).
var cryptoMethodBits = []struct {
	bit     int64
	version uint16
}{{8, tls.VersionTLS10}, {16, tls.VersionTLS11}, {32, tls.VersionTLS12}, {64, tls.VersionTLS13}}

// setCryptoMethod turns a STREAM_CRYPTO_METHOD_* mask into the range of
// TLS versions it allows; a mask Go cannot express as a range (SSLv2 or
// SSLv3 only, or TLS 1.0 and 1.2 without 1.1) is refused.
func (o *TLSOptions) setCryptoMethod(key string, v any) error {
	if v == nil {
		return nil
	}
	mask, ok := phpInt(v)
	if !ok {
		return fmt.Errorf("the SSL context option %s %q is not a STREAM_CRYPTO_METHOD_* value", key, phparray.String(v))
	}
	var lo, hi uint16
	gap := false
	for _, b := range cryptoMethodBits {
		switch {
		case mask&b.bit == 0:
			gap = gap || lo != 0
		case gap:
			return fmt.Errorf("the SSL context option %s %d allows TLS versions that are not a range; Go takes a lowest and a highest version", key, mask)
		default:
			if lo == 0 {
				lo = b.version
			}
			hi = b.version
		}
	}
	if lo == 0 {
		return fmt.Errorf("the SSL context option %s %d allows no TLS version (SSLv2 and SSLv3 are not supported)", key, mask)
	}
	o.MinVersion, o.MaxVersion = lo, hi
	return nil
}

// summary is the options for String (paths and switches; no secret).
func (o TLSOptions) summary() string {
	var parts []string
	add := func(on bool, s string) {
		if on {
			parts = append(parts, s)
		}
	}
	add(o.NoVerifyPeer, "verify_peer:false")
	add(o.NoVerifyPeerName, "verify_peer_name:false")
	add(o.AllowSelfSigned, "allow_self_signed")
	add(o.NoSNI, "SNI_enabled:false")
	add(o.PeerName != "", "peer_name:"+o.PeerName)
	add(o.CAFile != "", "cafile:"+o.CAFile)
	add(o.CAPath != "", "capath:"+o.CAPath)
	add(o.LocalCert != "", "local_cert:"+o.LocalCert)
	add(o.LocalPK != "", "local_pk:"+o.LocalPK)
	add(o.MinVersion != 0, fmt.Sprintf("tls:%s-%s", tls.VersionName(o.MinVersion), tls.VersionName(o.MaxVersion)))
	if len(parts) == 0 {
		return ""
	}
	return " TLSOptions:{" + strings.Join(parts, " ") + "}"
}
