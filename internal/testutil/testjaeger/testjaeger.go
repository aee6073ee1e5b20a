// Package testjaeger starts a private Jaeger (v1.75.0, the OpenTelemetry
// Collector based "jaeger" binary, in-memory storage) for tests: it
// receives OTLP on loopback ports of its own (gRPC and HTTP) and answers
// queries on its HTTP API, where a test reads the spans back as
// OpenTelemetry's JSON (api/v3).
//
// scripts/setup-jaeger.sh builds the binary into .cache (the tests find
// it there, on PATH, or at LARAWORKER_JAEGER). Without it a test skips,
// saying what to run, unless LARAWORKER_TEST_REQUIRE_DB is set (CI),
// which fails it.
package testjaeger

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
)

// Version is the Jaeger release scripts/setup-jaeger.sh builds.
const Version = "v1.75.0"

// Server is one Jaeger process.
type Server struct {
	// GRPC is the OTLP/gRPC receiver's host:port; HTTP the OTLP/HTTP
	// receiver's base URL (http://127.0.0.1:port).
	GRPC, HTTP string
	query      string
	cmd        *exec.Cmd
	log        *os.File
}

// Start starts Jaeger on free loopback ports; it is killed when the test
// ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binary(t)
	dir := t.TempDir()
	ports := freePorts(t, 4)
	s := &Server{
		GRPC:  "127.0.0.1:" + ports[0],
		HTTP:  "http://127.0.0.1:" + ports[1],
		query: "http://127.0.0.1:" + ports[2],
	}
	config := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(config, []byte(configYAML(ports)), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "jaeger.log"))
	if err != nil {
		t.Fatal(err)
	}
	s.log = log
	s.cmd = exec.Command(bin, "--config=file:"+config)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("testjaeger: starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-exited
		log.Close()
	})
	ready := testwait.Poll(60*time.Second, func() bool {
		select {
		case <-exited:
			return true
		default:
		}
		return listening(ports[0]) && listening(ports[1]) && s.answers()
	})
	select {
	case <-exited:
		t.Fatalf("testjaeger: jaeger exited at start:\n%s", s.logTail())
	default:
	}
	if !ready {
		t.Fatalf("testjaeger: jaeger did not answer within 60s:\n%s", s.logTail())
	}
	return s
}

// binary finds the jaeger binary, or skips (fails when required).
func binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("LARAWORKER_JAEGER"); p != "" {
		return p
	}
	if root, err := repoRoot(); err == nil {
		p := filepath.Join(root, ".cache", "jaeger-"+Version, "jaeger")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("jaeger"); err == nil {
		return p
	}
	msg := "testjaeger: no jaeger binary (an OTLP receiver the tracing tests need): run scripts/setup-jaeger.sh"
	if testdsn.Required() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "scripts", "setup-jaeger.sh")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// configYAML is Jaeger's all-in-one setup on the given ports (OTLP gRPC,
// OTLP HTTP, query HTTP, query gRPC), in memory, without its own
// telemetry's ports.
func configYAML(ports []string) string {
	return fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%s
    grpc:
      endpoint: 127.0.0.1:%s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%s
      http:
        endpoint: 127.0.0.1:%s
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`, ports[2], ports[3], ports[0], ports[1])
}

func freePorts(t testing.TB, n int) []string {
	t.Helper()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return out
}

func listening(port string) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func (s *Server) answers() bool {
	resp, err := http.Get(s.query + "/api/services")
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

// Span is one span as Jaeger's api/v3 returns it (OTLP JSON), with its
// resource's attributes.
type Span struct {
	TraceID      string      `json:"traceId"`
	SpanID       string      `json:"spanId"`
	ParentSpanID string      `json:"parentSpanId"`
	Name         string      `json:"name"`
	Kind         int         `json:"kind"`
	Attributes   []Attribute `json:"attributes"`
	Events       []Event     `json:"events"`
	Status       struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"status"`
	Scope    string      `json:"-"`
	Resource []Attribute `json:"-"`
}

// OTLP's enum values, as Jaeger's api/v3 writes them.
const (
	KindConsumer = 5
	KindProducer = 4
	StatusError  = 2
)

// Attribute is a key and its value as OTLP JSON writes it
// ({"stringValue": "x"}, {"intValue": "5"}, {"boolValue": true}).
type Attribute struct {
	Key   string                     `json:"key"`
	Value map[string]json.RawMessage `json:"value"`
}

// Event is a span event (an exception).
type Event struct {
	Name       string      `json:"name"`
	Attributes []Attribute `json:"attributes"`
}

// Attr is the value of key as text ("" when absent), and whether it is
// there.
func Attr(attrs []Attribute, key string) (string, bool) {
	for _, a := range attrs {
		if a.Key != key {
			continue
		}
		for _, raw := range a.Value {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s, true
			}
			return string(raw), true
		}
		return "", true
	}
	return "", false
}

// Attr is the span's attribute key as text.
func (s Span) Attr(key string) (string, bool) { return Attr(s.Attributes, key) }

type tracesDoc struct {
	Result struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []Attribute `json:"attributes"`
			} `json:"resource"`
			ScopeSpans []struct {
				Scope struct {
					Name string `json:"name"`
				} `json:"scope"`
				Spans []Span `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	} `json:"result"`
}

// Spans are every span of service.name service Jaeger holds, and the
// raw answer (to search for what must not be there); empty until some
// arrived.
func (s *Server) Spans(t testing.TB, service string) ([]Span, string) {
	t.Helper()
	q := url.Values{}
	q.Set("query.service_name", service)
	q.Set("query.start_time_min", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano))
	q.Set("query.start_time_max", time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano))
	q.Set("query.num_traces", "100")
	resp, err := http.Get(s.query + "/api/v3/traces?" + q.Encode())
	if err != nil {
		t.Fatalf("testjaeger: query: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusNotFound {
		return nil, string(body)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("testjaeger: query: %s: %s", resp.Status, body)
	}
	var doc tracesDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("testjaeger: %v: %s", err, body)
	}
	var out []Span
	for _, rs := range doc.Result.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				sp.Scope, sp.Resource = ss.Scope.Name, rs.Resource.Attributes
				out = append(out, sp)
			}
		}
	}
	return out, string(body)
}

// WaitSpans waits until Jaeger holds at least n spans of service.
func (s *Server) WaitSpans(t testing.TB, service string, n int) ([]Span, string) {
	t.Helper()
	var spans []Span
	var raw string
	if !testwait.Poll(30*time.Second, func() bool {
		spans, raw = s.Spans(t, service)
		return len(spans) >= n
	}) {
		t.Fatalf("testjaeger: %d spans of %s arrived, want %d:\n%s", len(spans), service, n, strings.TrimSpace(raw))
	}
	return spans, raw
}
