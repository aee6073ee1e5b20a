package testredis

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartReplica starts a server replicating master (both plain, or both
// TLS with the same PKI: pass p, else nil), with extra arguments
// (--masterauth PW...).
func StartReplica(t testing.TB, master *Server, p *PKI, extra ...string) *Server {
	t.Helper()
	args := append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(master.Port)}, extra...)
	if p != nil {
		return StartTLS(t, p, args...)
	}
	return Start(t, args...)
}

// SentinelOptions are a test sentinel's settings.
type SentinelOptions struct {
	// PKI: the sentinel reaches the master over TLS and takes TLS only
	// (client certificates required), unless PlainPort.
	PKI       *PKI
	PlainPort bool
	// Password is the sentinel's own requirepass; MasterPassword the
	// master's (and its replicas'), which the sentinel needs.
	Password, MasterPassword string
}

// StartSentinel starts `redis-server --sentinel` on a free loopback port,
// monitoring master under service with a quorum of 1 and a
// down-after of one second, so that one sentinel fails over alone within
// seconds of the master's death.
func StartSentinel(t testing.TB, service string, master *Server, o SentinelOptions) *Server {
	t.Helper()
	p := o.PKI
	bin := lookPath(t, "redis-server")
	dir := t.TempDir()
	var lastErr error
	for range 5 {
		port, err := freePort(false)
		if err != nil {
			t.Fatalf("testredis: %v", err)
		}
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", port))
		lines := []string{
			"port " + strconv.Itoa(port), "bind 127.0.0.1", "dir " + dir,
			fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 1", service, master.Port),
			"sentinel down-after-milliseconds " + service + " 1000",
			"sentinel failover-timeout " + service + " 10000",
		}
		if p != nil {
			lines = append(lines, "tls-cert-file "+p.ServerCert, "tls-key-file "+p.ServerKey, "tls-ca-cert-file "+p.CA, "tls-replication yes")
			if !o.PlainPort {
				lines = append(lines, "port 0", "tls-port "+strconv.Itoa(port), "tls-auth-clients yes")
			}
		}
		if o.Password != "" {
			lines = append(lines, "requirepass "+o.Password)
		}
		if o.MasterPassword != "" {
			lines = append(lines, "sentinel auth-pass "+service+" "+o.MasterPassword)
		}
		if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatalf("testredis: %v", err)
		}
		s := &Server{Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, args: []string{conf, "--sentinel"}, password: o.Password}
		if p != nil && !o.PlainPort {
			s.tls = p.ClientTLS(t)
		}
		if lastErr = s.start(bin); lastErr == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("testredis: sentinel: %v", lastErr)
	return nil
}

// WaitMaster waits until the sentinel names addr as the master of
// service (after a failover: the promoted replica).
func WaitMaster(t testing.TB, sentinel *Server, service, addr string, timeout time.Duration) {
	t.Helper()
	c := redis.NewSentinelClient(&redis.Options{Addr: sentinel.Addr, TLSConfig: sentinel.tls, Password: sentinel.password})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got []string
	var err error
	for {
		got, err = c.GetMasterAddrByName(ctx, service).Result()
		if err == nil && len(got) == 2 && net.JoinHostPort(got[0], got[1]) == addr {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("testredis: the sentinel names %v (%v) as the master of %s, not %s, after %s", got, err, service, addr, timeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
