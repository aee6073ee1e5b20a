// Package jobtrace is the OpenTelemetry span of one job attempt: a
// CONSUMER span named and attributed as OpenTelemetry's PHP
// instrumentation for Laravel names its own (Hooks/Illuminate/Queue/
// Worker.php and AttributesBuilder.php in open-telemetry/
// opentelemetry-php-contrib), child of the trace context the payload
// carries, so a trace looks the same whichever worker ran the job.
//
// A nil *Tracer is tracing switched off: every method is a no-op that
// allocates nothing, so a worker without a TracerProvider pays nothing
// per job.
package jobtrace

import (
	"context"
	"encoding/json"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/worker/internal/phpexception"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of the worker's spans.
const ScopeName = "github.com/laraworker/laraworker/worker"

// Attribute names: semantic conventions' messaging attributes, and the
// PHP instrumentation's own messaging.message.* names.
const (
	AttrSystem         = "messaging.system"
	AttrDestination    = "messaging.destination.name"
	AttrMessageID      = "messaging.message.id"
	AttrEnvelopeSize   = "messaging.message.envelope.size"
	AttrJobName        = "messaging.message.job_name"
	AttrAttempts       = "messaging.message.attempts"
	AttrMaxExceptions  = "messaging.message.max_exceptions"
	AttrMaxTries       = "messaging.message.max_tries"
	AttrRetryUntil     = "messaging.message.retry_until"
	AttrTimeout        = "messaging.message.timeout"
	AttrDeleted        = "messaging.message.deleted"
	AttrReleased       = "messaging.message.released"
	AttrReleaseDelay   = "messaging.message.release_delay"
	AttrFailed         = "messaging.message.failed"
	AttrOutcome        = "laraworker.outcome"
	AttrExceptionType  = "exception.type"
	AttrExceptionMsg   = "exception.message"
	operationProcess   = "process"
	exceptionEventName = "exception"
)

// payloadPropagator is W3C Trace Context alone, whatever OTEL_PROPAGATORS
// says: PHP's instrumentation reads and writes the payload with
// TraceContextPropagator, so the payload speaks only that.
var payloadPropagator = propagation.TraceContext{}

// Tracer starts the spans of job attempts.
type Tracer struct {
	tracer trace.Tracer
	// redact removes secrets from what comes from outside the worker's
	// own vocabulary (exception messages) before it goes into a span:
	// attributes otherwise hold names, ids and counts only.
	redact func(string) string
}

// New is a Tracer on tp, with redact applied to exception messages (nil:
// none); nil (tracing off) when tp is nil or a no-op provider.
func New(tp trace.TracerProvider, redact func(string) string) *Tracer {
	switch tp.(type) {
	case nil, noop.TracerProvider, *noop.TracerProvider:
		return nil
	}
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &Tracer{tracer: tp.Tracer(ScopeName), redact: redact}
}

// Destination is the queue as PHP's instrumentation names it.
type Destination struct {
	// System is messaging.system: "redis" for Laravel's Redis queue; ""
	// (no attribute) for the database queue, as in PHP.
	System string
	// Name is messaging.destination.name and the span name's second word:
	// RedisQueue::getQueue's "queues:<name>" on Redis, the queue's name on
	// the database queue (where PHP writes "(anonymous)").
	Name string
}

// Attempt is what a span knows of the attempt besides its payload.
type Attempt struct {
	Destination Destination
	// Attempts is the attempt's number (the first is 1).
	Attempts int64
	// Raw is the payload as reserved, for its size.
	Raw []byte
}

// Span is one attempt's span; nil when tracing is off.
type Span struct {
	span   trace.Span
	redact func(string) string
}

// Start starts the attempt's CONSUMER span, "process <destination>", as a
// child of the payload's W3C trace context (a new trace when it has none,
// or p is nil: a payload that is not JSON), and returns ctx holding it.
func (t *Tracer) Start(ctx context.Context, p *payload.Payload, a Attempt) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	parent := ctx
	if p != nil {
		tp, ts := p.TraceContext()
		if tp != "" {
			parent = payloadPropagator.Extract(ctx, &carrier{tp, ts})
		}
	}
	ctx, span := t.tracer.Start(parent, operationProcess+" "+a.Destination.Name,
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attributes(p, a)...))
	return ctx, &Span{span: span, redact: t.redact}
}

// attributes are AttributesBuilder's, in its order; a key whose value PHP
// has as null is left out, as PHP's SDK drops null attributes.
func attributes(p *payload.Payload, a Attempt) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, attribute.String(AttrDestination, a.Destination.Name))
	if p != nil {
		if id := messageID(p); id != "" {
			attrs = append(attrs, attribute.String(AttrMessageID, id))
		}
	}
	attrs = append(attrs, attribute.Int(AttrEnvelopeSize, len(a.Raw)))
	if p != nil {
		if name := p.Name(); name != "" {
			attrs = append(attrs, attribute.String(AttrJobName, name))
		}
	}
	attrs = append(attrs, attribute.Int64(AttrAttempts, a.Attempts))
	if p != nil {
		attrs = appendInt(attrs, AttrMaxExceptions, p.MaxExceptions)
		attrs = appendInt(attrs, AttrMaxTries, p.MaxTries)
		attrs = appendInt(attrs, AttrRetryUntil, p.RetryUntil)
		attrs = appendInt(attrs, AttrTimeout, p.Timeout)
	}
	if a.Destination.System != "" {
		attrs = append(attrs, attribute.String(AttrSystem, a.Destination.System))
	}
	return attrs
}

func appendInt(attrs []attribute.KeyValue, key string, v *int64) []attribute.KeyValue {
	if v == nil {
		return attrs
	}
	return append(attrs, attribute.Int64(key, *v))
}

// messageID is `$payload['uuid'] ?? $payload['id']`.
func messageID(p *payload.Payload) string {
	if p.UUID != "" {
		return p.UUID
	}
	var id string
	if raw, ok := p.Extra["id"]; ok && json.Unmarshal(raw, &id) == nil {
		return id
	}
	return ""
}

// Outcome is what became of the attempt.
type Outcome struct {
	// Deleted: the job left the queue (done, or failed: Laravel's fail()
	// deletes it too).
	Deleted bool
	// Released: put back for another attempt after ReleaseDelay.
	Released     bool
	ReleaseDelay time.Duration
	// Failed: moved to failed_jobs.
	Failed bool
	// Err is the attempt's exception (a failure's, or the one a release
	// after an exception retries): recorded, and the status is ERROR.
	Err error
	// Reason is the worker's name for the outcome ("done", "released",
	// "failed", "unrouted", ...), as its logs and metrics say it.
	Reason string
}

// End records the outcome and ends the span. Unlike PHP's, which marks
// only exceptions escaping Worker::process, a job whose attempt threw
// (released to retry, or failed) has status ERROR and its exception.
func (s *Span) End(o Outcome) {
	if s == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.Bool(AttrDeleted, o.Deleted || o.Failed),
		attribute.Bool(AttrReleased, o.Released),
		attribute.String(AttrOutcome, o.Reason),
	}
	if o.Released {
		attrs = append(attrs, attribute.Int64(AttrReleaseDelay, int64(o.ReleaseDelay/time.Second)))
	}
	if o.Failed {
		attrs = append(attrs, attribute.Bool(AttrFailed, true))
	}
	s.span.SetAttributes(attrs...)
	if o.Err != nil {
		class, message := phpexception.ClassAndMessage(phpexception.WithoutFrames(o.Err))
		message = s.redact(message)
		s.span.AddEvent(exceptionEventName, trace.WithAttributes(
			attribute.String(AttrExceptionType, class), attribute.String(AttrExceptionMsg, message)))
		s.span.SetStatus(codes.Error, message)
	} else if o.Failed {
		s.span.SetStatus(codes.Error, o.Reason)
	}
	s.span.End()
}

// Inject is the W3C trace context of ctx's span, as a payload carries it;
// "" when ctx holds no valid span context.
func Inject(ctx context.Context) (traceparent, tracestate string) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return "", ""
	}
	var c carrier
	payloadPropagator.Inject(ctx, &c)
	return c.traceparent, c.tracestate
}

// carrier is a payload's two W3C keys.
type carrier struct{ traceparent, tracestate string }

func (c *carrier) Get(key string) string {
	switch key {
	case payload.TraceparentKey:
		return c.traceparent
	case payload.TracestateKey:
		return c.tracestate
	}
	return ""
}

func (c *carrier) Set(key, value string) {
	switch key {
	case payload.TraceparentKey:
		c.traceparent = value
	case payload.TracestateKey:
		c.tracestate = value
	}
}

func (c *carrier) Keys() []string { return []string{payload.TraceparentKey, payload.TracestateKey} }
