package payloadcmd

import (
	"context"
	"os"

	"github.com/laraworker/laraworker/internal/otelsetup"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// pushTrace is the W3C trace context a pushed job carries, as
// OpenTelemetry's PHP hook injects the current context at dispatch: the
// trace the environment names (TRACEPARENT and TRACESTATE, as a CI job
// or a traced script hands them on), and, when OTEL_* variables turn
// tracing on (docs/TRACING.md), a PRODUCER span "create <destination>"
// for the push, exported before push returns. end ends that span.
func pushTrace(ctx context.Context, destination, uuid, class string) (traceparent, tracestate string, end func(), err error) {
	setup, err := otelsetup.FromEnv(ctx, nil)
	if err != nil {
		return "", "", nil, err
	}
	w3c := propagation.TraceContext{}
	if tp := os.Getenv("TRACEPARENT"); tp != "" {
		ctx = w3c.Extract(ctx, propagation.MapCarrier{"traceparent": tp, "tracestate": os.Getenv("TRACESTATE")})
	}
	end = func() {}
	if setup.Enabled() {
		var span trace.Span
		ctx, span = setup.Provider.Tracer("github.com/laraworker/laraworker/console").Start(ctx, "create "+destination,
			trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
				attribute.String("messaging.destination.name", destination),
				attribute.String("messaging.message.id", uuid),
				attribute.String("messaging.message.job_name", class)))
		end = func() {
			span.End()
			_ = setup.Shutdown(context.Background())
		}
	}
	c := propagation.MapCarrier{}
	w3c.Inject(ctx, c)
	return c["traceparent"], c["tracestate"], end, nil
}
