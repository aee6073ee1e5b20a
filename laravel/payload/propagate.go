package payload

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// The top-level keys that PHP's payload hooks add at dispatch to carry a
// request's trace and context into the job (Queue::createPayloadUsing and
// OpenTelemetry's post hook on createPayloadArray).
const (
	// TraceparentKey and TracestateKey are W3C Trace Context, written by
	// OpenTelemetry's Laravel instrumentation (tracestate only when not
	// empty).
	TraceparentKey = "traceparent"
	TracestateKey  = "tracestate"
	// Sentry's Laravel SDK (QueueIntegration) writes these three, in this
	// order: W3C baggage with sentry-* members, Sentry's own
	// "<trace>-<span>[-0|-1]" (not W3C), and microtime(true) at dispatch.
	SentryBaggageKey     = "sentry_baggage_data"
	SentryTraceKey       = "sentry_trace_parent_data"
	SentryPublishTimeKey = "sentry_publish_time"
)

// TraceContext is the payload's W3C trace context as OpenTelemetry's PHP
// instrumentation wrote it ("" when absent or not a string).
func (p *Payload) TraceContext() (traceparent, tracestate string) {
	return p.extraString(TraceparentKey), p.extraString(TracestateKey)
}

// extraString is a top-level string key PHP's hooks added; "" when it is
// absent, null or not a string.
func (p *Payload) extraString(key string) string {
	raw, ok := p.Extra[key]
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return ""
	}
	return s
}

// SentryTrace is the trace Sentry's Laravel SDK put into the payload at
// dispatch, for the worker to continue (sentry.ContinueTrace in Go's SDK
// takes TraceParent and Baggage as they are).
type SentryTrace struct {
	// TraceParent is sentry_trace_parent_data: "<trace32>-<span16>", with
	// "-1" or "-0" when the sampling decision is known; "" when Sentry
	// had no trace to give.
	TraceParent string
	// Baggage is sentry_baggage_data: W3C baggage with sentry-* members.
	Baggage string
	// PublishTime is sentry_publish_time, when the job was dispatched;
	// zero when the payload has none (before sentry-laravel 4.6).
	PublishTime time.Time
}

// SentryTrace reads Sentry's keys; ok is false when the payload has
// neither sentry_trace_parent_data nor sentry_baggage_data.
func (p *Payload) SentryTrace() (SentryTrace, bool) {
	_, hasTrace := p.Extra[SentryTraceKey]
	_, hasBaggage := p.Extra[SentryBaggageKey]
	if !hasTrace && !hasBaggage {
		return SentryTrace{}, false
	}
	t := SentryTrace{TraceParent: p.extraString(SentryTraceKey), Baggage: p.extraString(SentryBaggageKey)}
	if raw, ok := p.Extra[SentryPublishTimeKey]; ok {
		var secs float64
		if json.Unmarshal(raw, &secs) == nil && secs > 0 {
			t.PublishTime = time.UnixMicro(int64(secs*1e6 + 0.5))
		}
	}
	return t, true
}

// Parent splits TraceParent into the trace id, the parent span id and the
// sampling decision (nil when the dispatching side did not know it); ok
// is false when it is not in Sentry's format.
func (t SentryTrace) Parent() (traceID, spanID string, sampled *bool, ok bool) {
	parts := strings.Split(t.TraceParent, "-")
	if len(parts) < 2 || len(parts) > 3 || !isHex(parts[0], 32) || !isHex(parts[1], 16) {
		return "", "", nil, false
	}
	if len(parts) == 3 {
		switch parts[2] {
		case "1", "0":
			s := parts[2] == "1"
			sampled = &s
		default:
			return "", "", nil, false
		}
	}
	return parts[0], parts[1], sampled, true
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// LogContext is Laravel's Context (11+) as the payload carries it under
// illuminate:log:context: what the dispatching request had added with
// Context::add (Data, which Laravel's logs carry on every line) and
// Context::addHidden (Hidden, which they never show), each value
// unserialized, in the order PHP wrote them.
type LogContext struct {
	Data   []ContextValue
	Hidden []ContextValue
}

// ContextValue is one entry of the Context.
type ContextValue struct {
	Key string
	// Value is the unserialized PHP value (Eloquent models are
	// ModelIdentifier objects, as Laravel stores them).
	Value *phpserialize.Value
}

// Get is Context::get: the visible value under key, nil when absent.
func (c *LogContext) Get(key string) *phpserialize.Value { return findContext(c.Data, key) }

// GetHidden is Context::getHidden: the hidden value under key, nil when
// absent.
func (c *LogContext) GetHidden(key string) *phpserialize.Value { return findContext(c.Hidden, key) }

func findContext(list []ContextValue, key string) *phpserialize.Value {
	for _, v := range list {
		if v.Key == key {
			return v.Value
		}
	}
	return nil
}

// LogContext reads illuminate:log:context; nil (and no error) when the
// payload has none. An error names the entry PHP could not hydrate
// either (Context::hydrate throws on a value it cannot unserialize).
func (p *Payload) LogContext() (*LogContext, error) {
	raw, ok := p.Extra[ContextKey]
	if !ok || isNull(raw) {
		return nil, nil
	}
	arr, err := contextArray(raw)
	if err != nil {
		return nil, err
	}
	c := &LogContext{}
	if c.Data, err = contextValues(arr, "data"); err != nil {
		return nil, err
	}
	if c.Hidden, err = contextValues(arr, "hidden"); err != nil {
		return nil, err
	}
	return c, nil
}

// contextArray is the context as PHP's json_decode($raw, true) gives it.
func contextArray(raw json.RawMessage) (*phpserialize.Value, error) {
	arr, err := FromJSON(raw)
	if err != nil || arr.Kind != phpserialize.KindArray {
		return nil, &PayloadError{Key: ContextKey, Msg: "want an object with data and hidden"}
	}
	return arr, nil
}

func contextValues(arr *phpserialize.Value, side string) ([]ContextValue, error) {
	v, _ := arr.Get(side)
	if v == nil || v.Kind == phpserialize.KindNull {
		return nil, nil
	}
	if v.Kind != phpserialize.KindArray {
		return nil, &PayloadError{Key: ContextKey + "." + side, Msg: "want an object of serialized values, got PHP " + v.Kind.String()}
	}
	out := make([]ContextValue, 0, len(v.Entries))
	for _, e := range v.Entries {
		key := e.Key.String()
		if e.Value.Kind != phpserialize.KindString {
			return nil, &PayloadError{Key: ContextKey + "." + side + "." + key, Msg: "want a serialized PHP value, got PHP " + e.Value.Kind.String()}
		}
		val, err := phpserialize.Unserialize(e.Value.Str)
		if err != nil {
			return nil, &PayloadError{Key: ContextKey + "." + side + "." + key, Msg: err.Error()}
		}
		out = append(out, ContextValue{Key: key, Value: val})
	}
	return out, nil
}

// Carried is what a job pushed from inside another job carries on from it
// in PHP, where the payload hooks run again at that dispatch: the Context
// the worker hydrated (Laravel dehydrates it again), Sentry's trace with a
// new publish time, and the W3C trace context of what runs the job.
// BuildObjectPayload writes it where PHP's hooks put it.
type Carried struct {
	// Context is illuminate:log:context as PHP's json_decode(…, true)
	// reads it: an array of "data" and "hidden", each of serialized
	// values; nil writes none.
	Context *phpserialize.Value
	// Sentry is written when set; its PublishTime is the dispatch time.
	Sentry *SentryTrace
	// Traceparent (when not "") and Tracestate (when not "" either) are
	// written as W3C Trace Context.
	Traceparent, Tracestate string
}

// Carry is what the job's payload p hands on to a job dispatched while it
// runs, at time now, as PHP's hooks would write it: the Context as
// Laravel's dehydrate() writes it (data, then hidden; none when both are
// empty), Sentry's trace as the payload had it with now as the publish
// time, and the payload's own W3C trace context (a tracing worker puts
// its own span's there instead). A Context Go cannot read is left out,
// and the error says why.
func (p *Payload) Carry(now time.Time) (Carried, error) {
	var c Carried
	var err error
	c.Context, err = p.carriedContext()
	if s, ok := p.SentryTrace(); ok {
		s.PublishTime = now
		c.Sentry = &s
	}
	c.Traceparent, c.Tracestate = p.TraceContext()
	return c, err
}

// carriedContext is the context as dehydrate() writes it again: only
// "data" and "hidden" (an empty side is PHP's empty array), nil when both
// are empty.
func (p *Payload) carriedContext() (*phpserialize.Value, error) {
	raw, ok := p.Extra[ContextKey]
	if !ok || isNull(raw) {
		return nil, nil
	}
	arr, err := contextArray(raw)
	if err != nil {
		return nil, err
	}
	out := phpserialize.Array()
	for _, side := range []string{"data", "hidden"} {
		v, _ := arr.Get(side)
		if v == nil || v.Kind == phpserialize.KindNull {
			v = phpserialize.Array()
		}
		if v.Kind != phpserialize.KindArray {
			return nil, &PayloadError{Key: ContextKey + "." + side, Msg: "want an object of serialized values, got PHP " + v.Kind.String()}
		}
		if err := out.SetEntry(phpserialize.StrKey(side), v); err != nil {
			return nil, err
		}
	}
	if len(out.Entries[0].Value.Entries) == 0 && len(out.Entries[1].Value.Entries) == 0 {
		return nil, nil
	}
	return out, nil
}

// IsZero reports whether c carries nothing.
func (c Carried) IsZero() bool {
	return c.Context == nil && c.Sentry == nil && c.Traceparent == ""
}

// carried writes c's keys: Laravel's Context hook (a framework provider,
// booted before packages), Sentry's, then OpenTelemetry's post hook on
// createPayloadArray, which runs after every createPayloadUsing hook.
func (w *jsonWriter) carried(c Carried) {
	if c.Context != nil {
		w.key(ContextKey, false).value(c.Context)
	}
	if s := c.Sentry; s != nil {
		w.key(SentryBaggageKey, false).str(s.Baggage)
		w.key(SentryTraceKey, false).str(s.TraceParent)
		w.key(SentryPublishTimeKey, false).float(float64(s.PublishTime.UnixMicro()) / 1e6)
	}
	if c.Traceparent != "" {
		w.key(TraceparentKey, false).str(c.Traceparent)
		if c.Tracestate != "" {
			w.key(TracestateKey, false).str(c.Tracestate)
		}
	}
}

// float writes f as json_encode does.
func (w *jsonWriter) float(f float64) *jsonWriter {
	if w.err != nil {
		return w
	}
	w.buf, w.err = appendValueJSON(w.buf, phpserialize.Float(f), 0)
	return w
}

// DataJSON is the visible data as one JSON object, {"key": value, ...} in
// PHP's order, each value as ReadableJSON renders it: what Laravel's logs
// carry on every line the job logs (Monolog's "extra"). Nil when there is
// no visible data.
func (c *LogContext) DataJSON() ([]byte, error) { return contextJSON(c.Data) }

// HiddenJSON is the hidden data, as DataJSON renders it. Laravel keeps it
// out of logs: so must whoever reads it.
func (c *LogContext) HiddenJSON() ([]byte, error) { return contextJSON(c.Hidden) }

func contextJSON(list []ContextValue) ([]byte, error) {
	if len(list) == 0 {
		return nil, nil
	}
	buf := []byte{'{'}
	for i, v := range list {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, err := json.Marshal(v.Key)
		if err != nil {
			return nil, err
		}
		val, err := ReadableJSON(v.Value)
		if err != nil {
			return nil, err
		}
		buf = append(append(append(buf, k...), ':'), val...)
	}
	return append(buf, '}'), nil
}
