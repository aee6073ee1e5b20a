// Package sentrytrace shows a Go handler continuing the Sentry trace that
// Sentry's Laravel SDK put into a job's payload at dispatch, with Sentry's
// Go SDK, as sentry-laravel's QueueIntegration does in a PHP worker: a
// "queue.process" transaction named after the job class, in the
// dispatching request's trace, with the receive latency measured from
// sentry_publish_time.
//
// It is a module of its own so that laraworker's go.mod does not require
// sentry-go; copy the handler into your program.
package sentrytrace

import (
	"context"
	"time"

	"github.com/getsentry/sentry-go"
	"github.com/laraworker/laraworker/handlers"
)

// Traced wraps h: each job runs inside a Sentry transaction that
// continues the job's Sentry trace (a new trace when the payload has
// none; none at all when the dispatching side decided not to sample it,
// as sentry-laravel does).
func Traced(h handlers.Handler) handlers.Handler {
	return handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
		hub := sentry.CurrentHub().Clone()
		ctx = sentry.SetHubOnContext(ctx, hub)
		st, _ := job.SentryTrace()
		tx := sentry.StartTransaction(ctx, job.DisplayName,
			sentry.ContinueTrace(hub, st.TraceParent, st.Baggage),
			sentry.WithOpName("queue.process"), sentry.WithTransactionSource(sentry.SourceTask))
		defer tx.Finish()
		tx.SetData("messaging.system", "laravel")
		tx.SetData("messaging.destination.name", job.Queue)
		tx.SetData("messaging.message.id", job.UUID)
		tx.SetData("messaging.message.retry.count", job.Attempts-1)
		if !st.PublishTime.IsZero() {
			tx.SetData("messaging.message.receive.latency", time.Since(st.PublishTime).Seconds())
		}
		err := h.Handle(tx.Context(), job)
		if err != nil {
			tx.Status = sentry.SpanStatusInternalError
			hub.CaptureException(err)
		} else {
			tx.Status = sentry.SpanStatusOK
		}
		return err
	})
}
