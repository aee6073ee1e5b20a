package worker

import (
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/worker/internal/jobtrace"
)

// The attempt's OpenTelemetry span (worker/internal/jobtrace), and what
// the jobs it pushes carry on from it.

// destinationOf is how the spans name store's queues: as the app's
// tracing names them in PHP's spans (the store says how).
func destinationOf(store jobqueue.Store) func(queue string) jobtrace.Destination {
	return func(queue string) jobtrace.Destination {
		system, name := store.TraceDestination(queue)
		return jobtrace.Destination{System: system, Name: name}
	}
}

// startSpan starts the attempt's span, when tracing is on, and gives the
// job's context (its handler's, and everything the worker does for the
// job) its context.
func (e *jobExecutor) startSpan(row jobqueue.JobRow, p *payload.Payload) {
	if e.tracer == nil {
		return
	}
	e.ctx, e.span = e.tracer.Start(e.ctx, p, jobtrace.Attempt{
		Destination: e.destination(row.Queue), Attempts: int64(row.Attempts), Raw: row.Payload,
	})
}

// endSpan records the attempt's outcome on its span and ends it. written
// is false when the outcome was not this run's to write (the job was
// given back at shutdown, or another worker took it).
func (e *jobExecutor) endSpan(out outcome, written bool) {
	if e.span == nil {
		return
	}
	o := jobtrace.Outcome{Err: out.err, Reason: out.reason}
	switch {
	case !written:
		o.Reason = "superseded"
	case out.verdict == verdictDelete:
		o.Deleted = true
	case out.verdict == verdictRelease:
		o.Released, o.ReleaseDelay = true, out.delay
	case out.verdict == verdictInterrupted:
		o.Released = true
	case out.verdict == verdictFail:
		o.Failed = true
	}
	e.span.End(o)
}

// carried is what a job pushed while this one runs (the next link of its
// chain, a hook job of the bridge) carries on from it, as PHP's payload
// hooks write it at that dispatch: Laravel's Context, Sentry's trace, and
// the W3C trace context of this attempt's span (when tracing is off, the
// payload's own, so the trace goes on through this worker).
func (e *jobExecutor) carried() payload.Carried {
	c, err := e.payload.Carry(e.clock.Now())
	if err != nil {
		e.log.Warn().Err(err).Str("uuid", e.payload.UUID).Msg("the job's Laravel Context cannot be read; the jobs it pushes do not carry it")
	}
	if e.span != nil {
		if tp, ts := jobtrace.Inject(e.ctx); tp != "" {
			c.Traceparent, c.Tracestate = tp, ts
		}
	}
	return c
}

// carriedBy is what a hook job of p carries on when p never ran (it
// failed while being reserved): the payload's own keys.
func carriedBy(p *payload.Payload) func() payload.Carried {
	return func() payload.Carried {
		if p == nil {
			return payload.Carried{}
		}
		c, _ := p.Carry(time.Now())
		return c
	}
}
