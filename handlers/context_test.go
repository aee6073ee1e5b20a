package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
)

// hookedPayload is the real 12.67 ShouldBeUnique job as an app with
// Laravel's Context (visible and hidden data), Sentry's Laravel SDK and
// OpenTelemetry's instrumentation writes it: their keys after createdAt,
// in the order their hooks run, before delay.
func hookedPayload(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "laravel-12.67", "payloads", "unique.json"))
	if err != nil {
		t.Fatal(err)
	}
	hooks := `"illuminate:log:context":{"data":{"user_id":"i:42;","request_id":"s:36:\"9a1c7e52-54c3-4b7e-9d29-0f1f5d0cfa37\";"},` +
		`"hidden":{"api_token":"s:13:\"hidden-s3cr3t\";"}}` +
		`,"sentry_baggage_data":"sentry-trace_id=771a43a4192642f0b136d5159a501700,sentry-sample_rate=1"` +
		`,"sentry_trace_parent_data":"771a43a4192642f0b136d5159a501700-b4d0a6e1b3a2c1f0-1"` +
		`,"sentry_publish_time":1796032508.5` +
		`,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`
	at := bytes.Index(raw, []byte(`"illuminate:log:context"`))
	end := bytes.Index(raw, []byte(`,"delay":`))
	out := append([]byte(nil), raw[:at]...)
	out = append(out, hooks...)
	return append(out, raw[end:]...)
}

func hookedJob(t *testing.T, log zerolog.Logger) *Job {
	t.Helper()
	p, err := payload.Parse(hookedPayload(t))
	if err != nil {
		t.Fatal(err)
	}
	return NewJob(7, "default", 1, p, Env{Logger: log})
}

// TestJobLoggerCarriesTheVisibleContext: the job's log lines carry the
// visible Context data under "extra", as Laravel's do; never the hidden.
func TestJobLoggerCarriesTheVisibleContext(t *testing.T) {
	var logs bytes.Buffer
	job := hookedJob(t, zerolog.New(&logs))
	job.Logger().Info().Msg("resizing")
	var line map[string]json.RawMessage
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, logs.String())
	}
	if want := `{"user_id":42,"request_id":"9a1c7e52-54c3-4b7e-9d29-0f1f5d0cfa37"}`; string(line["extra"]) != want {
		t.Errorf("extra = %s, want %s", line["extra"], want)
	}
	if strings.Contains(logs.String(), "hidden-s3cr3t") || strings.Contains(logs.String(), "api_token") {
		t.Errorf("the hidden context is logged: %s", logs.String())
	}
	c, err := job.LogContext()
	if err != nil || c.GetHidden("api_token") == nil || c.Get("user_id").Int != 42 {
		t.Fatalf("LogContext() = %+v, %v", c, err)
	}
	s, ok := job.SentryTrace()
	if trace, span, _, parsed := s.Parent(); !ok || !parsed || trace != "771a43a4192642f0b136d5159a501700" || span != "b4d0a6e1b3a2c1f0" {
		t.Errorf("SentryTrace() = %+v", s)
	}

	logs.Reset()
	plain := fixtureJob(t, "scalars.json")
	plain.env.Logger = zerolog.New(&logs)
	plain.Logger().Info().Msg("x")
	if strings.Contains(logs.String(), "extra") {
		t.Errorf("a job without a Context logs one: %s", logs.String())
	}
}

// execRun runs an exec handler that keeps its stdin and environment, and
// returns them.
func execRun(t *testing.T, ctx context.Context, job *Job) (ExecInput, string) {
	t.Helper()
	dir := t.TempDir()
	script := writeScript(t, "cat > "+filepath.Join(dir, "in")+"; env > "+filepath.Join(dir, "env")+"\n")
	h, err := Builtin("exec:"+script, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, job); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "in"))
	env, _ := os.ReadFile(filepath.Join(dir, "env"))
	var in ExecInput
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return in, string(env)
}

// TestExecInputHasContextAndTrace: an exec handler gets the Context (both
// sides), Sentry's trace and the W3C trace context, on stdin and (W3C)
// in TRACEPARENT, never the worker's own TRACEPARENT.
func TestExecInputHasContextAndTrace(t *testing.T) {
	t.Setenv("TRACEPARENT", "00-11111111111111111111111111111111-2222222222222222-01")
	in, env := execRun(t, context.Background(), hookedJob(t, zerolog.Nop()))
	if in.Context == nil || string(in.Context.Data) != `{"user_id":42,"request_id":"9a1c7e52-54c3-4b7e-9d29-0f1f5d0cfa37"}` ||
		string(in.Context.Hidden) != `{"api_token":"hidden-s3cr3t"}` {
		t.Errorf("context = %+v", in.Context)
	}
	const payloadTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if in.Trace == nil || in.Trace.Traceparent != payloadTP || in.Trace.Sentry == nil ||
		in.Trace.Sentry.Trace != "771a43a4192642f0b136d5159a501700-b4d0a6e1b3a2c1f0-1" ||
		in.Trace.Sentry.PublishTime == nil || *in.Trace.Sentry.PublishTime != 1796032508.5 {
		t.Fatalf("trace = %+v", in.Trace)
	}
	if !strings.Contains(env, "TRACEPARENT="+payloadTP+"\n") || strings.Contains(env, "2222222222222222") {
		t.Errorf("TRACEPARENT is not the job's:\n%s", env)
	}

	// Inside the worker's span of the attempt, that span is the parent.
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  trace.SpanID{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11}, TraceFlags: trace.FlagsSampled,
	})
	in, env = execRun(t, trace.ContextWithSpanContext(context.Background(), sc), hookedJob(t, zerolog.Nop()))
	const spanTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-aabbccddeeff0011-01"
	if in.Trace == nil || in.Trace.Traceparent != spanTP || !strings.Contains(env, "TRACEPARENT="+spanTP+"\n") {
		t.Errorf("the span's context is not handed on: %+v", in.Trace)
	}

	// A job with neither has neither, and no TRACEPARENT.
	in, env = execRun(t, context.Background(), fixtureJob(t, "scalars.json"))
	if in.Context != nil || in.Trace != nil || strings.Contains(env, "TRACEPARENT") {
		t.Errorf("a plain job has context %+v, trace %+v, env:\n%s", in.Context, in.Trace, env)
	}
}
