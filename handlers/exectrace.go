package handlers

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/laraworker/laraworker/laravel/payload"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// execContext is the job's Laravel Context for ExecInput, or why it
// cannot be read.
func execContext(job *Job) (*ExecContext, string) {
	c, err := job.LogContext()
	if err != nil {
		return nil, err.Error()
	}
	if c == nil {
		return nil, ""
	}
	data, err := c.DataJSON()
	if err != nil {
		return nil, err.Error()
	}
	hidden, err := c.HiddenJSON()
	if err != nil {
		return nil, err.Error()
	}
	return &ExecContext{Data: orEmptyObject(data), Hidden: orEmptyObject(hidden)}, ""
}

func orEmptyObject(b []byte) json.RawMessage {
	if b == nil {
		return json.RawMessage("{}")
	}
	return b
}

// execTrace is the trace the job runs in: ctx's span (the worker's span
// of the attempt, when it traces), else the payload's W3C trace context;
// and Sentry's. Nil when there is none.
func execTrace(ctx context.Context, job *Job) *ExecTrace {
	t := &ExecTrace{}
	if trace.SpanContextFromContext(ctx).IsValid() {
		c := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, c)
		t.Traceparent, t.Tracestate = c.Get(payload.TraceparentKey), c.Get(payload.TracestateKey)
	} else {
		t.Traceparent, t.Tracestate = job.Payload.TraceContext()
	}
	if s, ok := job.SentryTrace(); ok {
		t.Sentry = &ExecSentry{Trace: s.TraceParent, Baggage: s.Baggage}
		if !s.PublishTime.IsZero() {
			secs := float64(s.PublishTime.UnixMicro()) / 1e6
			t.Sentry.PublishTime = &secs
		}
	}
	if t.Traceparent == "" && t.Sentry == nil {
		return nil
	}
	return t
}

// withTraceEnv is env with the W3C trace context as the environment
// carries it to a process (OpenTelemetry's TRACEPARENT and TRACESTATE):
// the job's, never the worker's own.
func withTraceEnv(env []string, t *ExecTrace) []string {
	out := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TRACEPARENT=") && !strings.HasPrefix(kv, "TRACESTATE=") {
			out = append(out, kv)
		}
	}
	if t == nil || t.Traceparent == "" {
		return out
	}
	out = append(out, "TRACEPARENT="+t.Traceparent)
	if t.Tracestate != "" {
		out = append(out, "TRACESTATE="+t.Tracestate)
	}
	return out
}
