// Package testsqs starts an SQS server on loopback for tests: fauxqs
// 2.4.1 (an SQS emulator that speaks SQS's JSON protocol, the one the Go
// SDK uses), one process per test binary, on a free port of its own, in
// memory. Each test makes queues of its own names (Queue), so tests of one
// package share the process and never each other's queues.
//
// scripts/setup-sqs.sh installs it into .cache (the tests find it there,
// or at LARAWORKER_SQS_SERVER). Without it a test skips, saying what to
// run, unless LARAWORKER_TEST_REQUIRE_DB is set (CI), which fails it.
//
// A package whose tests use it calls Main from its TestMain, so that the
// server is stopped when the tests end.
package testsqs

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
)

// Version is the fauxqs release scripts/setup-sqs.sh installs.
const Version = "2.4.1"

// Server is the SQS server of this test binary.
type Server struct {
	// Endpoint is its base URL (http://127.0.0.1:port): the SDK's endpoint,
	// Laravel's sqs connection's "endpoint".
	Endpoint string
	// Prefix is the queue URL prefix its queues have
	// (http://127.0.0.1:port/000000000000): Laravel's "prefix".
	Prefix string
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{}
}

var (
	once    sync.Once
	shared  *Server
	initErr error
	skipMsg string
)

// Main runs the tests and then stops the server, if one was started.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the server, if one was started: for a TestMain of its own.
func Stop() {
	if shared != nil {
		shared.stop()
	}
}

// Start returns the test binary's server, starting it on first use.
func Start(t testing.TB) *Server {
	t.Helper()
	once.Do(func() {
		bin, msg := binary()
		if bin == "" {
			skipMsg = msg
			return
		}
		shared, initErr = start(bin)
	})
	if skipMsg != "" {
		if testdsn.Required() {
			t.Fatal(skipMsg)
		}
		t.Skip(skipMsg)
	}
	if initErr != nil {
		t.Fatal(initErr)
	}
	return shared
}

func start(bin string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	log, err := os.CreateTemp("", "testsqs-*.log")
	if err != nil {
		return nil, err
	}
	s := &Server{
		Endpoint: "http://127.0.0.1:" + port,
		Prefix:   "http://127.0.0.1:" + port + "/000000000000",
		log:      log, exited: make(chan struct{}),
	}
	s.cmd = exec.Command(bin, port)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	setParentDeathSignal(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("testsqs: starting %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("testsqs: fauxqs exited at start:\n%s", s.logTail())
		default:
		}
		if s.healthy() {
			return s, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.stop()
	return nil, fmt.Errorf("testsqs: fauxqs did not answer within 60s:\n%s", s.logTail())
}

func (s *Server) stop() {
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.log.Close()
	os.Remove(s.log.Name())
}

func (s *Server) healthy() bool {
	resp, err := http.Get(s.Endpoint + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.log.Name())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Queue creates a queue of a fresh name starting with base (a FIFO queue
// when base ends in ".fifo") with the given attributes and returns its
// name (what Laravel's "queue" names) and URL.
func (s *Server) Queue(t testing.TB, base string, attrs map[string]string) (name, url string) {
	t.Helper()
	fifo := strings.HasSuffix(base, ".fifo")
	base = strings.TrimSuffix(base, ".fifo")
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name = base + "-" + hex.EncodeToString(b)
	if fifo {
		name += ".fifo"
		if attrs == nil {
			attrs = map[string]string{}
		}
		attrs["FifoQueue"] = "true"
	}
	req := map[string]any{"QueueName": name}
	if len(attrs) > 0 {
		req["Attributes"] = attrs
	}
	if _, err := s.Call("CreateQueue", req); err != nil {
		t.Fatal(err)
	}
	return name, s.Prefix + "/" + name
}

// Call sends one SQS JSON-protocol request and returns the decoded
// answer: the server's own view, for tests that check what a store wrote
// without going through it.
func (s *Server) Call(action string, req any) (map[string]any, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	r, err := http.NewRequest(http.MethodPost, s.Endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	r.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("testsqs: %s: %s: %s", action, resp.Status, raw)
	}
	out := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("testsqs: %s: %v: %s", action, err, raw)
		}
	}
	return out, nil
}

// Attributes reads a queue's attributes as the server keeps them.
func (s *Server) Attributes(t testing.TB, url string) map[string]string {
	t.Helper()
	out, err := s.Call("GetQueueAttributes", map[string]any{"QueueUrl": url, "AttributeNames": []string{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]string{}
	if m, ok := out["Attributes"].(map[string]any); ok {
		for k, v := range m {
			attrs[k], _ = v.(string)
		}
	}
	return attrs
}

// Count is one of a queue's Approximate... attributes as a number.
func (s *Server) Count(t testing.TB, url, attr string) int {
	t.Helper()
	n, err := strconv.Atoi(s.Attributes(t, url)[attr])
	if err != nil {
		t.Fatalf("testsqs: attribute %s of %s: %v", attr, url, err)
	}
	return n
}

// Send puts a message on a queue as another client would (opts: the
// request's other parameters, e.g. DelaySeconds, MessageGroupId).
func (s *Server) Send(t testing.TB, url, body string, opts map[string]any) string {
	t.Helper()
	req := map[string]any{"QueueUrl": url, "MessageBody": body}
	for k, v := range opts {
		req[k] = v
	}
	out, err := s.Call("SendMessage", req)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := out["MessageId"].(string)
	return id
}

// binary finds the launcher scripts/setup-sqs.sh installs; "" and why
// when there is none.
func binary() (string, string) {
	if p := os.Getenv("LARAWORKER_SQS_SERVER"); p != "" {
		return p, ""
	}
	if root, err := repoRoot(); err == nil {
		p := filepath.Join(root, ".cache", "fauxqs-"+Version, "fauxqs")
		if _, err := os.Stat(p); err == nil {
			return p, ""
		}
	}
	return "", "testsqs: no SQS server (fauxqs " + Version + ", which the SQS tests need): run scripts/setup-sqs.sh"
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "setup-sqs.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
