// Package testredis starts private redis-server processes for tests: one
// server, or a three-master Redis Cluster, on free loopback ports, with
// nothing saved to disk, stopped when the test ends. Tests that flush,
// restart or cluster Redis use these and never the machine's Redis (6379).
// A machine without redis-server (or redis-cli, for a cluster) skips the
// test, unless LARAWORKER_TEST_REQUIRE_DB is set (CI sets it), which fails
// it.
package testredis

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/redis/go-redis/v9"
)

// startTimeout bounds how long a server may take to answer PING.
const startTimeout = 10 * time.Second

// Server is one redis-server process on 127.0.0.1.
type Server struct {
	Port int
	// Addr is "127.0.0.1:<port>".
	Addr string
	dir  string
	args []string
	// tls, for a server that takes TLS only: what its PING and Client
	// connect with (a client certificate of the test's CA).
	tls *tls.Config
	// password is a sentinel's requirepass (WaitMaster authenticates).
	password string

	mu  sync.Mutex
	cmd *exec.Cmd
	log *os.File
}

// Start starts a redis-server on a free loopback port with extra
// arguments (e.g. "--requirepass", "pw") and stops it at the end of the
// test.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin := lookPath(t, "redis-server")
	dir := t.TempDir()
	var lastErr error
	// Another process can take the port between our probe and the bind:
	// try a few ports.
	for range 5 {
		port, err := freePort(false)
		if err != nil {
			t.Fatalf("testredis: %v", err)
		}
		s := newServer(dir, port, extra)
		if lastErr = s.start(bin); lastErr == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("testredis: %v", lastErr)
	return nil
}

func newServer(dir string, port int, extra []string) *Server {
	args := []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--pidfile", filepath.Join(dir, fmt.Sprintf("redis-%d.pid", port)),
	}
	return &Server{Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, args: append(args, extra...)}
}

// start runs the process and waits until it answers PING.
func (s *Server) start(bin string) error {
	logFile, err := os.Create(filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", s.Port)))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, s.args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.log = cmd, logFile
	s.mu.Unlock()
	if err := s.waitReady(exited); err != nil {
		s.Kill()
		return fmt.Errorf("redis-server on port %d: %w\n%s", s.Port, err, s.logTail())
	}
	return nil
}

// waitReady polls PING until the server answers or exited closes.
func (s *Server) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-exited:
			return errors.New("exited before answering PING")
		default:
		}
		if s.ping() == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PING answer within %s", startTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping sends an inline PING and reads the reply, without a client pool.
func (s *Server) ping() error {
	d := &net.Dialer{Timeout: time.Second}
	var conn net.Conn
	var err error
	if s.tls != nil {
		conn, err = tls.DialWithDialer(d, "tcp", s.Addr, s.tls)
	} else {
		conn, err = d.Dial("tcp", s.Addr)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := conn.Read(buf)
	if err != nil {
		return err
	}
	// A password-protected server answers -NOAUTH: it is up.
	if reply := string(buf[:n]); strings.HasPrefix(reply, "+PONG") || strings.HasPrefix(reply, "-NOAUTH") {
		return nil
	}
	return fmt.Errorf("PING answered %q", buf[:n])
}

// Kill stops the server at once (SIGKILL), as a crash would; its data is
// gone. It is safe to call twice.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, logFile := s.cmd, s.log
	s.cmd, s.log = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	for i := 0; i < 500 && s.ping() == nil; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if logFile != nil {
		logFile.Close()
	}
}

// Restart kills the server and starts it again on the same port (empty:
// nothing is saved), as a Redis restart looks to clients.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	var err error
	// The port is released at once after the kill; retry briefly anyway.
	for range 20 {
		if err = s.start(lookPath(t, "redis-server")); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("testredis: restart: %v", err)
}

// Client is a go-redis client for the server, closed at the end of the
// test.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2, DisableIdentity: true, TLSConfig: s.tls})
	t.Cleanup(func() { c.Close() })
	return c
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", s.Port)))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

// freePort finds a loopback port nobody listens on; withBus also needs
// port+10000 free (a cluster node's bus port) and keeps the port below
// 55536 so that exists.
func freePort(withBus bool) (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !withBus {
			return port, nil
		}
		if port+10000 > 65535 {
			continue
		}
		if b, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000))); err == nil {
			b.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free port pair for a cluster node")
}

// lookPath finds a binary or skips (fails when servers are required).
func lookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("testredis: %s is not installed (Debian: redis-server, redis-tools)", name)
		if testdsn.Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// Cluster is a Redis Cluster of three masters (no replicas).
type Cluster struct {
	Nodes []*Server
	// Addrs are the nodes' addresses, the seeds a client needs.
	Addrs []string
}

// StartCluster starts three cluster-enabled servers, joins them with
// `redis-cli --cluster create` and waits until every node reports
// cluster_state:ok.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	bin := lookPath(t, "redis-server")
	cli := lookPath(t, "redis-cli")
	c := &Cluster{}
	for i := range 3 {
		dir := t.TempDir()
		var s *Server
		var err error
		for range 5 {
			port, perr := freePort(true)
			if perr != nil {
				t.Fatalf("testredis: %v", perr)
			}
			s = newServer(dir, port, []string{
				"--cluster-enabled", "yes",
				"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", port)),
				"--cluster-node-timeout", "5000",
			})
			if err = s.start(bin); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("testredis: cluster node %d: %v", i, err)
		}
		t.Cleanup(s.Kill)
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("testredis: redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := c.waitOK(ctx); err != nil {
		t.Fatalf("testredis: %v", err)
	}
	return c
}

// waitOK polls CLUSTER INFO on every node until all say cluster_state:ok
// and know all three masters.
func (c *Cluster) waitOK(ctx context.Context) error {
	for _, n := range c.Nodes {
		client := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2, DisableIdentity: true})
		for {
			info, err := client.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:3") {
				break
			}
			select {
			case <-ctx.Done():
				client.Close()
				return fmt.Errorf("cluster node %s not ready: %v %q", n.Addr, err, info)
			case <-time.After(50 * time.Millisecond):
			}
		}
		client.Close()
	}
	return nil
}

// Client is a cluster client for the nodes, closed at the end of the test.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { cc.Close() })
	return cc
}

// CJSON returns doc as Redis's Lua cjson re-encodes it: what Laravel's
// Redis pop script puts in the reserved set, and its release script back
// on the queue (an empty list becomes {}, keys lose their order).
func (s *Server) CJSON(t testing.TB, doc []byte) []byte {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	out, err := c.Eval(context.Background(), "return cjson.encode(cjson.decode(ARGV[1]))", nil, string(doc)).Text()
	if err != nil {
		t.Fatalf("testredis: cjson: %v", err)
	}
	return []byte(out)
}

// CommandCalls is INFO commandstats: how many times each command has run
// on the server, by name ("zadd", "evalsha").
func CommandCalls(t testing.TB, rc redis.UniversalClient) map[string]int64 {
	t.Helper()
	info, err := rc.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			t.Fatalf("INFO commandstats: %q", line)
		}
		out[strings.TrimPrefix(name, "cmdstat_")] = n
	}
	return out
}
