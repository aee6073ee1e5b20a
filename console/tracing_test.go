package console

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/internal/testutil/testjaeger"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"go.opentelemetry.io/otel"
)

// A PHP request's trace, as OpenTelemetry's PHP instrumentation writes
// it into the payloads it dispatches (traceparent after Laravel's and
// Sentry's hook keys, before delay).
const (
	phpTrace     = "4bf92f3577b34da6a3ce929d0e0e4736"
	phpSpan      = "00f067aa0ba902b7"
	phpTrace2    = "5cf92f3577b34da6a3ce929d0e0e4799"
	phpSpan2     = "a1b2c3d4e5f60718"
	phpState     = "rojo=00f067aa0ba902b7"
	hiddenSecret = "hidden-api-token-8c1"
)

func randomSecret(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// secretForms are the ways a secret may be written where spans and logs
// carry text: as is, escaped for a URL's query or path, and as PHP's
// json_encode writes it (a slash escaped).
func secretForms(secret string) []string {
	return []string{secret, url.QueryEscape(secret), url.PathEscape(secret), strings.ReplaceAll(secret, "/", `\/`)}
}

// phpHooked is a real 12.67 payload (testdata/laravel-12.67) as an app
// with Context, Sentry and OpenTelemetry writes it, in trace/span.
func phpHooked(t *testing.T, fixture, trace, span string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "laravel-12.67", "payloads", fixture))
	if err != nil {
		t.Fatal(err)
	}
	hooks := `,"illuminate:log:context":{"data":{"user_id":"i:42;","locale":"s:5:\"fr_FR\";"},"hidden":{"api_token":"s:20:\"` + hiddenSecret + `\";"}}` +
		`,"sentry_baggage_data":"sentry-trace_id=771a43a4192642f0b136d5159a501700,sentry-sample_rate=1"` +
		`,"sentry_trace_parent_data":"771a43a4192642f0b136d5159a501700-b4d0a6e1b3a2c1f0-1"` +
		`,"sentry_publish_time":1796032508.5` +
		`,"traceparent":"00-` + trace + `-` + span + `-01","tracestate":"` + phpState + `"`
	end := bytes.Index(raw, []byte(`,"delay":`))
	out := append([]byte(nil), raw[:end]...)
	out = append(out, hooks...)
	return append(out, raw[end:]...)
}

// mariaDBUser makes a MariaDB user with a random password on the tests'
// database, dropped after the test.
func mariaDBUser(t *testing.T) (user, password string) {
	t.Helper()
	testdsn.NeedMySQL(t)
	root, err := sql.Open("mysql", testdsn.MySQLDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	if err := root.Ping(); err != nil {
		if testdsn.Required() {
			t.Fatalf("MariaDB: %v", err)
		}
		t.Skipf("MariaDB not reachable: %v", err)
	}
	// + and / (base64's own) and =: the characters a secret in a URL or
	// in PHP's JSON is escaped for (secretForms).
	user, password = "lw_trace_"+randomSecret(t, 4), "Pw+/"+randomSecret(t, 12)+"="
	db := testdsn.MySQL(t).Database
	for _, host := range []string{"%", "localhost", "127.0.0.1"} {
		for _, q := range []string{
			fmt.Sprintf("CREATE USER '%s'@'%s' IDENTIFIED BY '%s'", user, host, password),
			fmt.Sprintf("GRANT ALL ON `%s`.* TO '%s'@'%s'", db, user, host),
		} {
			if _, err := root.Exec(q); err != nil {
				t.Fatalf("%s: %v", strings.Replace(q, password, "***", 1), err)
			}
		}
	}
	t.Cleanup(func() {
		for _, host := range []string{"%", "localhost", "127.0.0.1"} {
			_, _ = root.Exec(fmt.Sprintf("DROP USER '%s'@'%s'", user, host))
		}
	})
	return user, password
}

// traceHandlers record what the jobs saw: ChainStep opens a span of its
// own and keeps its payload; AlwaysFails fails; NoopJob does nothing.
type traceHandlers struct {
	mu       sync.Mutex
	payloads map[int64][]byte // ChainStep's payload by step
}

func (h *traceHandlers) registry(t *testing.T) *handlers.Registry {
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\ChainStep`, func(ctx context.Context, job *handlers.Job) error {
		var step struct {
			Step int64 `php:"step"`
		}
		if err := job.Decode(&step); err != nil {
			return err
		}
		_, span := otel.Tracer("test/handler").Start(ctx, "resize thumbnail")
		job.Logger().Info().Int64("step", step.Step).Msg("resizing")
		span.End()
		h.mu.Lock()
		h.payloads[step.Step] = job.Payload.Raw
		h.mu.Unlock()
		return nil
	})
	reg.HandleFunc(`App\Jobs\AlwaysFails`, func(context.Context, *handlers.Job) error {
		return errors.New("it broke: no thumbnail for podcast 7")
	})
	reg.Handle(`App\Jobs\NoopJob`, handlers.Noop())
	return reg
}

// runWorkIn runs `work` in this process with reg, as an embedding program
// does, and returns its log.
func runWorkIn(t *testing.T, reg *handlers.Registry, args ...string) string {
	t.Helper()
	app := New(reg, Options{Name: "laraworker"})
	var out bytes.Buffer
	var errb lockedBuffer
	app.Writer, app.ErrWriter, app.Reader = &out, &errb, strings.NewReader("")
	args = append([]string{"laraworker", "work", "--stop-when-empty", "--sleep", "0.05", "--heartbeat=false", "--log-format", "json", "--memory", "0"}, args...)
	if code := Run(app, args); code != 0 {
		t.Fatalf("work exited %d:\n%s%s", code, out.String(), errb.String())
	}
	return errb.String()
}

func setOTel(t *testing.T, service string, vars ...string) {
	t.Helper()
	t.Setenv("OTEL_SERVICE_NAME", service)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=tracing-test")
	for i := 0; i+1 < len(vars); i += 2 {
		t.Setenv(vars[i], vars[i+1])
	}
}

func spanNamed(t *testing.T, spans []testjaeger.Span, name, trace string) testjaeger.Span {
	t.Helper()
	for _, s := range spans {
		if s.Name == name && (trace == "" || s.TraceID == trace) {
			return s
		}
	}
	t.Fatalf("no span %q in trace %q among %d spans", name, trace, len(spans))
	return testjaeger.Span{}
}

func wantAttrs(t *testing.T, s testjaeger.Span, want map[string]string) {
	t.Helper()
	for k, v := range want {
		got, ok := s.Attr(k)
		if v == "-" {
			if ok {
				t.Errorf("span %s: attribute %s = %q, want none", s.Name, k, got)
			}
			continue
		}
		if got != v {
			t.Errorf("span %s: attribute %s = %q, want %q", s.Name, k, got, v)
		}
	}
}

// TestWorkTracesJobsInJaeger: `laraworker work` with the standard OTEL_*
// variables (OTLP over HTTP) exports, to a real Jaeger, a span per job
// attempt that continues the trace a PHP request put into the payload:
// the child of the dispatch span, named and attributed as PHP's
// instrumentation names its own; a failed job's span is ERROR with its
// exception; a handler's own span is the job span's child; the next
// chain link Go pushes carries the trace on (and Laravel's Context and
// Sentry's trace); a job without a traceparent starts a trace. No span,
// attribute or resource attribute holds a secret: the DB password, the
// APP_KEY (random, for this test) or the Context's hidden data.
func TestWorkTracesJobsInJaeger(t *testing.T) {
	jaeger := testjaeger.Start(t)
	user, password := mariaDBUser(t)
	cfg := testdb.Config(t, appconfig.EngineMySQL)
	q := testdb.Open(t, cfg)
	appKey := "base64:" + base64.StdEncoding.EncodeToString([]byte(randomSecret(t, 16)))
	env := filepath.Join(t.TempDir(), ".env")
	srv := testdsn.MySQL(t)
	os.WriteFile(env, []byte(fmt.Sprintf("DB_CONNECTION=mysql\nDB_HOST=%s\nDB_PORT=%d\nDB_DATABASE=%s\nDB_USERNAME=%s\nDB_PASSWORD=%s\nAPP_KEY=%s\n"+
		"DB_QUEUE_TABLE=%s\nQUEUE_FAILED_TABLE=%s\nQUEUE_BATCHES_TABLE=%s\n",
		srv.Host, srv.Port, srv.Database, user, password, appKey, cfg.JobsTable, cfg.FailedTable, cfg.BatchesTable)), 0o600)

	chain := phpHooked(t, "chain.json", phpTrace, phpSpan)
	fails := phpHooked(t, "fails.json", phpTrace2, phpSpan2)
	noop, err := os.ReadFile(filepath.Join("..", "testdata", "laravel-12.67", "payloads", "noop.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range [][]byte{chain, fails, noop} {
		if _, err := q.Push(context.Background(), jobqueue.PushItem{Queue: "default", Payload: raw}); err != nil {
			t.Fatal(err)
		}
	}
	service := "lw-trace-" + randomSecret(t, 4)
	setOTel(t, service, "OTEL_EXPORTER_OTLP_ENDPOINT", jaeger.HTTP, "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	h := &traceHandlers{payloads: map[int64][]byte{}}
	logs := runWorkIn(t, h.registry(t), "--env", env, "--tries", "1")

	// Link 1, its handler's span, link 2 and its handler's span, the
	// failure, the no-op.
	spans, raw := jaeger.WaitSpans(t, service, 6)
	link1 := spanNamed(t, spans, "process default", phpTrace)
	if link1.ParentSpanID != phpSpan || link1.Kind != testjaeger.KindConsumer {
		t.Errorf("link 1: parent %q kind %d, want the PHP dispatch span %s, CONSUMER", link1.ParentSpanID, link1.Kind, phpSpan)
	}
	p1, _ := payload.Parse(chain)
	wantAttrs(t, link1, map[string]string{
		"messaging.destination.name": "default", "messaging.message.id": p1.UUID, "messaging.message.job_name": `App\Jobs\ChainStep`,
		"messaging.message.attempts": "1", "messaging.message.envelope.size": fmt.Sprint(len(chain)),
		"messaging.message.deleted": "true", "messaging.message.released": "false", "laraworker.outcome": "done",
		"messaging.system": "-", "messaging.message.max_tries": "-",
	})
	resize := spanNamed(t, spans, "resize thumbnail", phpTrace)
	if resize.ParentSpanID != link1.SpanID {
		t.Errorf("the handler's span's parent is %q, want the job's %s", resize.ParentSpanID, link1.SpanID)
	}
	checkNextLink(t, h, spans, link1)

	failed := spanNamed(t, spans, "process default", phpTrace2)
	if failed.ParentSpanID != phpSpan2 || failed.Status.Code != testjaeger.StatusError ||
		!strings.Contains(failed.Status.Message, "it broke: no thumbnail for podcast 7") {
		t.Errorf("failed job's span: parent %q status %+v", failed.ParentSpanID, failed.Status)
	}
	wantAttrs(t, failed, map[string]string{"messaging.message.failed": "true", "messaging.message.deleted": "true", "laraworker.outcome": "failed"})
	if len(failed.Events) != 1 || failed.Events[0].Name != "exception" {
		t.Fatalf("failed job's span events: %+v", failed.Events)
	}
	if msg, _ := testjaeger.Attr(failed.Events[0].Attributes, "exception.message"); msg != "it broke: no thumbnail for podcast 7" {
		t.Errorf("exception.message = %q", msg)
	}

	pn, _ := payload.Parse(noop)
	var root testjaeger.Span
	for _, s := range spans {
		if id, _ := s.Attr("messaging.message.id"); id == pn.UUID {
			root = s
		}
	}
	if root.SpanID == "" || root.ParentSpanID != "" || root.TraceID == phpTrace || root.TraceID == phpTrace2 {
		t.Errorf("a job without traceparent: span %+v, want a root span of a new trace", root)
	}
	for _, s := range spans {
		if v, _ := testjaeger.Attr(s.Resource, "service.name"); v != service {
			t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's %q", v, service)
		}
		if v, _ := testjaeger.Attr(s.Resource, "deployment.environment"); v != "tracing-test" {
			t.Errorf("OTEL_RESOURCE_ATTRIBUTES not applied: %q", v)
		}
	}
	for _, secret := range []string{password, appKey, strings.TrimPrefix(appKey, "base64:"), hiddenSecret} {
		for _, form := range secretForms(secret) {
			if strings.Contains(raw, form) {
				t.Errorf("a secret reached Jaeger: %q", form)
			}
			if strings.Contains(logs, form) {
				t.Errorf("a secret reached the log: %q", form)
			}
		}
	}
	if !strings.Contains(logs, `"extra":{"user_id":42,"locale":"fr_FR"}`) {
		t.Errorf("the job's log lines lack the visible Context:\n%s", logs)
	}
}

// checkNextLink: the next chain link Go pushed carried the trace on (its
// traceparent is link 1's span, same trace, PHP's tracestate), Laravel's
// Context and Sentry's trace, and its own span is link 1's child.
func checkNextLink(t *testing.T, h *traceHandlers, spans []testjaeger.Span, link1 testjaeger.Span) {
	t.Helper()
	h.mu.Lock()
	next := h.payloads[2]
	h.mu.Unlock()
	p, err := payload.Parse(next)
	if err != nil {
		t.Fatalf("link 2 did not run: %v", err)
	}
	tp, ts := p.TraceContext()
	if want := "00-" + phpTrace + "-" + link1.SpanID + "-01"; tp != want || ts != phpState {
		t.Errorf("link 2 carries traceparent %q tracestate %q, want %q %q", tp, ts, want, phpState)
	}
	if !bytes.Contains(next, []byte(`"illuminate:log:context":{"data":{"user_id":"i:42;","locale":"s:5:\"fr_FR\";"},"hidden":{"api_token":"s:20:\"`+hiddenSecret+`\";"}},"sentry_baggage_data":`)) ||
		!bytes.Contains(next, []byte(`"sentry_trace_parent_data":"771a43a4192642f0b136d5159a501700-b4d0a6e1b3a2c1f0-1","sentry_publish_time":`)) {
		t.Errorf("link 2 does not carry the Context and Sentry's trace as PHP writes them:\n%s", next)
	}
	var link2 testjaeger.Span
	for _, s := range spans {
		if id, _ := s.Attr("messaging.message.id"); id == p.UUID {
			link2 = s
		}
	}
	if link2.TraceID != phpTrace || link2.ParentSpanID != link1.SpanID {
		t.Errorf("link 2's span: trace %q parent %q, want %s and link 1's %s", link2.TraceID, link2.ParentSpanID, phpTrace, link1.SpanID)
	}
}

// TestWorkTracesRedisJobsOverGRPC: over OTLP/gRPC, a Redis queue's job
// pushed with `laraworker push` inside a trace (TRACEPARENT) is traced as
// PHP names a Redis job's span ("process queues:default",
// messaging.system redis), as the child of the push's PRODUCER span,
// which is the child of the trace the environment named; the Redis
// password (random) reaches no span.
func TestWorkTracesRedisJobsOverGRPC(t *testing.T) {
	jaeger := testjaeger.Start(t)
	password := "Redis+/" + randomSecret(t, 12) + "="
	srv := testredis.Start(t, "--requirepass", password)
	dir := copyLaravelApp(t)
	env := filepath.Join(dir, ".env")
	os.WriteFile(env, []byte(fmt.Sprintf("DB_CONNECTION=sqlite\nDB_DATABASE=%s\nQUEUE_CONNECTION=redis\nREDIS_HOST=127.0.0.1\nREDIS_PORT=%d\nREDIS_PASSWORD=%s\nCACHE_STORE=file\nCACHE_DRIVER=file\n",
		filepath.Join(dir, "db.sqlite"), srv.Port, password)), 0o600)
	// The app's version, as composer.lock gives it.
	os.WriteFile(filepath.Join(dir, "composer.lock"), []byte(`{"packages":[{"name":"laravel/framework","version":"v12.67.0"}]}`), 0o644)
	app := []string{"--app", dir, "--php", "off"}
	service := "lw-trace-" + randomSecret(t, 4)
	setOTel(t, service, "OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+jaeger.GRPC, "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc",
		"TRACEPARENT", "00-"+phpTrace+"-"+phpSpan+"-01")
	if out, errOut, code := runCLI(t, append([]string{"push", `App\Jobs\NoopJob`}, app...)...); code != 0 {
		t.Fatalf("push: %d %s %s", code, out, errOut)
	}
	t.Setenv("TRACEPARENT", "")
	runWorkIn(t, (&traceHandlers{}).registry(t), append(app, "--create-tables")...)

	spans, raw := jaeger.WaitSpans(t, service, 2)
	create := spanNamed(t, spans, "create queues:default", phpTrace)
	process := spanNamed(t, spans, "process queues:default", phpTrace)
	if create.ParentSpanID != phpSpan || create.Kind != testjaeger.KindProducer {
		t.Errorf("push's span: parent %q kind %d", create.ParentSpanID, create.Kind)
	}
	if process.ParentSpanID != create.SpanID {
		t.Errorf("the job's span's parent is %q, want the push's %s", process.ParentSpanID, create.SpanID)
	}
	wantAttrs(t, process, map[string]string{"messaging.system": "redis", "messaging.destination.name": "queues:default",
		"messaging.message.attempts": "1", "messaging.message.job_name": `App\Jobs\NoopJob`, "messaging.message.deleted": "true"})
	for _, form := range secretForms(password) {
		if strings.Contains(raw, form) {
			t.Errorf("the Redis password reached Jaeger: %q", form)
		}
	}
}

// copyLaravelApp copies the test app's files (testdata/laravel: its
// config, which a Redis queue connection is read from) without its .env.
func copyLaravelApp(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "testdata", "laravel")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if rel == ".env" || strings.HasSuffix(rel, ".sqlite") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
