package redisproto

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
)

// connectResult is one line of testdata/redis-connect.php.
type connectResult struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// phpConnect connects with the installed Laravel's RedisManager to the
// "default" connection of each config('database.redis'), each in a PHP
// process of its own (predis 1.x leaks a connection's SSL options into
// the next one's); it skips when PHP, phpredis, predis or Laravel is
// missing (fails when the test servers are required).
func phpConnect(t *testing.T, configs []map[string]any) []connectResult {
	t.Helper()
	skip := func(why string) {
		if testdsn.Required() {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	if _, err := exec.LookPath("php"); err != nil {
		skip("php is not installed")
	}
	check := `echo extension_loaded('redis') && stream_resolve_include_path('Predis/autoload.php') && stream_resolve_include_path('Illuminate/autoload.php') ? 'yes' : 'no';`
	if out, err := exec.Command("php", "-r", check).Output(); err != nil || string(out) != "yes" {
		skip("php lacks phpredis, predis or Laravel (Debian: php-redis, php-predis, php-laravel-framework)")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "redis-connect.php"))
	if err != nil {
		t.Fatal(err)
	}
	results := make([]connectResult, len(configs))
	for i, conf := range configs {
		in, err := json.Marshal([]map[string]any{conf})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, "php", script)
		cmd.Stdin = strings.NewReader(string(in))
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("php: %v %s", err, out)
		}
		if err := json.Unmarshal(out, &results[i]); err != nil {
			t.Fatalf("php printed %q: %v", out, err)
		}
	}
	return results
}

// goConnect opens the queue on the app's "default" connection as
// laraworker does and pings.
func goConnect(conf map[string]any) error {
	cfg, err := FromLaravel("redis", map[string]any{"driver": "redis", "queue": "default"}, conf, LaravelOptions{Version: "8.83.26"})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := Open(ctx, cfg)
	if err != nil {
		return err
	}
	return q.Close()
}

// tlsConnection is database.redis of an app whose "default" connection
// is TLS to 127.0.0.1:port with the SSL context ssl, as the client takes
// it: phpredis under options.context.stream (Laravel 8 to 13.4), predis
// in the "ssl" parameter.
func tlsConnection(client string, port int, ssl map[string]any) map[string]any {
	conn := map[string]any{"scheme": "tls", "host": "127.0.0.1", "port": port}
	if client == "predis" {
		conn["ssl"] = ssl
	} else {
		conn["options"] = map[string]any{"context": map[string]any{"stream": ssl}}
	}
	b, _ := json.Marshal(map[string]any{"client": client, "default": conn})
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// TestTLSOptionsAsPHP connects to TLS redis-servers that require client
// certificates with the SSL context options PHP takes, through Laravel's
// own RedisManager (phpredis and predis) and through Go, and requires the
// same outcome, and the expected one, for each: the CA file, the system's
// CAs, verify_peer off (PHP still checks the name), a certificate for
// another name and peer_name, verify_peer_name off, a key inside
// local_cert, no client certificate, a self-signed server and
// allow_self_signed, TLS versions by crypto_method.
func TestTLSOptionsAsPHP(t *testing.T) {
	ipPKI := testredis.NewPKI(t, "127.0.0.1")
	namePKI := testredis.NewPKI(t, "redis.test")
	ipSrv := testredis.StartTLS(t, ipPKI)
	nameSrv := testredis.StartTLS(t, namePKI)
	selfSrv := testredis.StartTLS(t, ipPKI.SelfSigned())
	clientOf := func(p *testredis.PKI, m map[string]any) map[string]any {
		m["local_cert"], m["local_pk"] = p.ClientCert, p.ClientKey
		return m
	}
	// ok is whether phpredis and predis connect, when they agree.
	const no, yes, predisOnly, phpredisOnly = "no", "yes", "predis", "phpredis"
	cases := []struct {
		name string
		srv  *testredis.Server
		ssl  map[string]any
		ok   string
	}{
		{"cafile", ipSrv, clientOf(ipPKI, map[string]any{"cafile": ipPKI.CA}), yes},
		{"the system's CAs", ipSrv, clientOf(ipPKI, map[string]any{}), no},
		{"verify_peer off", ipSrv, clientOf(ipPKI, map[string]any{"verify_peer": false}), yes},
		{"another CA", ipSrv, clientOf(ipPKI, map[string]any{"cafile": namePKI.CA}), no},
		{"no client certificate", ipSrv, map[string]any{"cafile": ipPKI.CA}, no},
		{"the key inside local_cert", ipSrv, map[string]any{"cafile": ipPKI.CA, "local_cert": ipPKI.Client}, yes},
		{"a certificate for another name", nameSrv, clientOf(namePKI, map[string]any{"cafile": namePKI.CA}), no},
		{"peer_name", nameSrv, clientOf(namePKI, map[string]any{"cafile": namePKI.CA, "peer_name": "redis.test"}), yes},
		{"a wrong peer_name", nameSrv, clientOf(namePKI, map[string]any{"cafile": namePKI.CA, "peer_name": "other.test"}), no},
		{"verify_peer_name off", nameSrv, clientOf(namePKI, map[string]any{"cafile": namePKI.CA, "verify_peer_name": false}), yes},
		{"verify_peer off still checks the name", nameSrv, clientOf(namePKI, map[string]any{"verify_peer": false}), no},
		{"both off", nameSrv, clientOf(namePKI, map[string]any{"verify_peer": false, "verify_peer_name": false}), yes},
		{"a self-signed server", selfSrv, clientOf(ipPKI, map[string]any{"cafile": ipPKI.CA}), no},
		{"allow_self_signed", selfSrv, clientOf(ipPKI, map[string]any{"cafile": ipPKI.CA, "allow_self_signed": true}), yes},
		// predis hands stream_socket_enable_crypto its own crypto_type,
		// which wins over crypto_method.
		// PHP reads null as "": an unset variable breaks these.
		{"an empty peer_name", ipSrv, clientOf(ipPKI, map[string]any{"cafile": ipPKI.CA, "peer_name": nil}), no},
		{"an empty cafile", ipSrv, clientOf(ipPKI, map[string]any{"cafile": nil}), no},
		{"an empty cafile, verify_peer off", ipSrv, clientOf(ipPKI, map[string]any{"cafile": nil, "verify_peer": false}), yes},
		{"an empty local_cert", ipSrv, map[string]any{"cafile": ipPKI.CA, "local_cert": nil}, no},
		{"TLS 1.1 only", ipSrv, clientOf(ipPKI, map[string]any{"cafile": ipPKI.CA, "crypto_method": 17}), predisOnly},
		{"TLS 1.2 only", ipSrv, clientOf(ipPKI, map[string]any{"cafile": ipPKI.CA, "crypto_method": 33}), yes},
		{"TLS 1.3 only", ipSrv, clientOf(ipPKI, map[string]any{"cafile": ipPKI.CA, "crypto_method": 65}), yes},
		{"predis's TLS 1.1 only", ipSrv, clientOf(ipPKI, map[string]any{"cafile": ipPKI.CA, "crypto_type": 17}), phpredisOnly},
	}
	var configs []map[string]any
	for _, tc := range cases {
		for _, client := range []string{"phpredis", "predis"} {
			configs = append(configs, tlsConnection(client, tc.srv.Port, tc.ssl))
		}
	}
	php := phpConnect(t, configs)
	for i, tc := range cases {
		for j, client := range []string{"phpredis", "predis"} {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				p := php[2*i+j]
				err := goConnect(configs[2*i+j])
				want := tc.ok == yes || tc.ok == client
				if p.OK != want {
					t.Errorf("PHP connected: %t (%s), want %t", p.OK, p.Error, want)
				}
				if (err == nil) != want {
					t.Errorf("Go connected: %t (%v), want %t", err == nil, err, want)
				}
			})
		}
	}
}

// TestTLSSettingsRefusedAtStart: a certificate file Go cannot read, an
// encrypted key, an SSL option Go cannot honour: NewClient (and so Open)
// fails with a *ConfigError naming the cause, before any connection.
func TestTLSSettingsRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	encrypted := filepath.Join(dir, "encrypted.key")
	if err := os.WriteFile(encrypted, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte("x")}), 0o600); err != nil {
		t.Fatal(err)
	}
	pki := testredis.NewPKI(t)
	cases := map[string]struct {
		ssl  map[string]any
		want string
	}{
		"missing cafile":     {map[string]any{"cafile": filepath.Join(dir, "nope.pem")}, "cafile: open"},
		"cafile not PEM":     {map[string]any{"cafile": encrypted}, "holds no PEM certificate"},
		"encrypted key":      {map[string]any{"local_cert": pki.ClientCert, "local_pk": encrypted, "passphrase": "hunter2"}, "is encrypted (passphrase)"},
		"key without cert":   {map[string]any{"local_pk": pki.ClientKey}, "local_pk is set without local_cert"},
		"ciphers":            {map[string]any{"ciphers": "HIGH"}, `"ciphers" is not one Go can honour`},
		"peer_fingerprint":   {map[string]any{"peer_fingerprint": "ab"}, `"peer_fingerprint" is not one Go can honour`},
		"SSLv3 only":         {map[string]any{"crypto_method": 5}, "allows no TLS version"},
		"not a range":        {map[string]any{"crypto_method": 8 | 32 | 1}, "not a range"},
		"context.auth":       {nil, "context.auth is set"},
		"missing local_cert": {map[string]any{"local_cert": filepath.Join(dir, "nope.pem")}, "local_cert: open"},
		"null peer_name":     {map[string]any{"peer_name": nil}, "peer_name is empty (null when its variable is unset)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			conf := tlsConnection("phpredis", 1, tc.ssl)
			if tc.ssl == nil {
				conf = decode(t, `{"default":{"scheme":"tls","host":"127.0.0.1","port":1,"options":{"context":{"auth":["u","hunter2"]}}}}`)
			}
			cfg, err := FromLaravel("redis", map[string]any{"driver": "redis", "queue": "default"}, conf, LaravelOptions{Version: "8.83.26"})
			if err == nil {
				_, err = NewClient(cfg.Redis)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !IsConfigError(err) {
				t.Fatalf("error %v (config error: %t), want one saying %q", err, IsConfigError(err), tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("the error shows the passphrase: %v", err)
			}
		})
	}
}
