package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// The spans as the SDK records them (its in-memory exporter); the tests
// of console (tracing_test.go) read them back from a real Jaeger.

func recordingProvider(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

func spanAttrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, a := range s.Attributes {
		out[a.Key] = a.Value
	}
	return out
}

// TestSpanOfAReleasedAttempt: a handler's release is on the span with its
// delay; the attempt did not fail.
func TestSpanOfAReleasedAttempt(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	uuid := push(t, q, "default", `App\Jobs\Later`)
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\Later`, func(_ context.Context, job *handlers.Job) error {
		job.Release(30 * time.Second)
		return nil
	})
	tp, exp := recordingProvider(t)
	cfg := testConfig()
	cfg.TracerProvider = tp
	w, _ := newTestWorker(t, q, reg, cfg, nil)
	runWorker(t, w, 10*time.Second)
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	a := spanAttrs(s)
	if s.Name != "process default" || s.SpanKind != trace.SpanKindConsumer || a["messaging.message.id"].AsString() != uuid {
		t.Errorf("span %q kind %v attrs %v", s.Name, s.SpanKind, a)
	}
	if !a["messaging.message.released"].AsBool() || a["messaging.message.release_delay"].AsInt64() != 30 ||
		a["messaging.message.deleted"].AsBool() || s.Status.Code == codes.Error {
		t.Errorf("a release: attrs %v status %v", a, s.Status)
	}
}

// TestSpanOfAnExceptionReleased: an attempt that threw and is released
// for another is ERROR with its exception (PHP's span is not: the
// exception does not escape Worker::process), and says it was released.
func TestSpanOfAnExceptionReleased(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	push(t, q, "default", `App\Jobs\Flaky`)
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\Flaky`, func(context.Context, *handlers.Job) error {
		return errors.New("upstream timed out")
	})
	tp, exp := recordingProvider(t)
	cfg := testConfig()
	cfg.TracerProvider, cfg.Tries, cfg.Backoff = tp, 3, "60"
	w, _ := newTestWorker(t, q, reg, cfg, nil)
	runWorker(t, w, 10*time.Second)
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	a := spanAttrs(s)
	if s.Status.Code != codes.Error || !strings.Contains(s.Status.Description, "upstream timed out") ||
		!a["messaging.message.released"].AsBool() || a["messaging.message.release_delay"].AsInt64() != 60 ||
		a["laraworker.outcome"].AsString() != "released_after_exception" {
		t.Errorf("status %v attrs %v", s.Status, a)
	}
	if len(s.Events) != 1 || s.Events[0].Name != "exception" {
		t.Errorf("events %v", s.Events)
	}
}

// TestSpanRedactsTheExceptionMessage: an exception message that holds a
// secret (a driver error quoting a password) reaches the span's status and
// exception event only through Config.Redact, as the CLI sets it.
func TestSpanRedactsTheExceptionMessage(t *testing.T) {
	const secret = "pw+/s3cr3t&<x>"
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	push(t, q, "default", `App\Jobs\Leaky`)
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\Leaky`, func(context.Context, *handlers.Job) error {
		return errors.New("connect: access denied for password " + secret)
	})
	tp, exp := recordingProvider(t)
	cfg := testConfig()
	cfg.TracerProvider, cfg.Tries = tp, 1
	cfg.Redact = func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	w, _ := newTestWorker(t, q, reg, cfg, nil)
	runWorker(t, w, 10*time.Second)
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	seen := s.Status.Description
	for _, ev := range s.Events {
		for _, a := range ev.Attributes {
			seen += " " + a.Value.String()
		}
	}
	if strings.Contains(seen, secret) || !strings.Contains(seen, "password [redacted]") {
		t.Errorf("the span shows %q", seen)
	}
}

// TestNoTracingWithoutAProvider: without a TracerProvider (or with a
// no-op one) the handler's ctx holds no span, and the next link of a
// chain carries the payload's own trace context on, so the trace goes
// on through a worker that does not trace.
func TestNoTracingWithoutAProvider(t *testing.T) {
	for name, tp := range map[string]trace.TracerProvider{"nil": nil, "noop": noop.NewTracerProvider()} {
		t.Run(name, func(t *testing.T) {
			q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
			raw, err := os.ReadFile(filepath.Join("..", "testdata", "laravel-12.67", "payloads", "chain.json"))
			if err != nil {
				t.Fatal(err)
			}
			const tp1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			at := strings.LastIndex(string(raw), `,"delay":`)
			raw = []byte(string(raw[:at]) + `,"traceparent":"` + tp1 + `"` + string(raw[at:]))
			pushRaw(t, q, "default", raw)
			var seen []string
			reg := handlers.NewRegistry()
			reg.HandleFunc(`App\Jobs\ChainStep`, func(ctx context.Context, job *handlers.Job) error {
				if trace.SpanContextFromContext(ctx).IsValid() {
					t.Error("the handler's ctx holds a span")
				}
				got, _ := job.Payload.TraceContext()
				seen = append(seen, got)
				return nil
			})
			cfg := testConfig()
			cfg.TracerProvider, cfg.Concurrency = tp, 1
			w, _ := newTestWorker(t, q, reg, cfg, nil)
			if w.exec.tracer != nil {
				t.Fatal("tracing is on")
			}
			runWorker(t, w, 10*time.Second)
			if len(seen) != 2 || seen[1] != tp1 {
				t.Errorf("traceparents seen by the links: %q, want the payload's on both", seen)
			}
		})
	}
}

// TestHookJobsCarryTheTrace: the bridge's hook job of a failure carries,
// as PHP's hooks write them at its dispatch, the failed job's Laravel
// Context and Sentry's trace, and the traceparent of the failed
// attempt's span: PHP hydrates the Context for failed() and continues the
// trace.
func TestHookJobsCarryTheTrace(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	hq := withHooksQueue(t, q)
	raw := fixture(t, "chain-catch.json")
	ctxKeys := `"illuminate:log:context":{"data":{"user_id":"i:42;"},"hidden":[]},"sentry_baggage_data":"b","sentry_trace_parent_data":"771a43a4192642f0b136d5159a501700-b4d0a6e1b3a2c1f0-1","sentry_publish_time":1796032508.5`
	raw = append(append([]byte(nil), raw[:len(raw)-1]...), ","+ctxKeys+`,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`...)
	pushRaw(t, q, "chains", raw)
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\ChainLinkJob`, func(context.Context, *handlers.Job) error { return errors.New("link broke") })
	tp, exp := recordingProvider(t)
	cfg := bridgeConfig()
	cfg.Queues, cfg.TracerProvider = []string{"chains"}, tp
	w, logs := newTestWorker(t, hq, reg, cfg, nil)
	runWorker(t, w, 30*time.Second)
	hooks := hookJobs(t, q)
	spans := exp.GetSpans()
	if len(hooks) != 1 || len(spans) != 1 {
		t.Fatalf("%d hook jobs, %d spans\n%s", len(hooks), len(spans), logs)
	}
	want := `,"illuminate:log:context":{"data":{"user_id":"i:42;"},"hidden":[]},"sentry_baggage_data":"b","sentry_trace_parent_data":"771a43a4192642f0b136d5159a501700-b4d0a6e1b3a2c1f0-1","sentry_publish_time":`
	got := hooks[0].row.Payload
	if !strings.Contains(got, want) {
		t.Errorf("the hook job does not carry the Context and Sentry's trace:\n%s", got)
	}
	sc := spans[0].SpanContext
	if !strings.HasSuffix(got, `"traceparent":"00-`+sc.TraceID().String()+"-"+sc.SpanID().String()+`-01"}`) || sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("the hook job's traceparent is not the failed attempt's span %s:\n%s", sc.SpanID(), got)
	}
}
