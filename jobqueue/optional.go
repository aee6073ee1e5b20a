package jobqueue

import (
	"context"
	"time"
)

// The optional capabilities of a store: the only ones a caller asks for
// with a type assertion (store.(jobqueue.ModelLookup)), because a store
// may genuinely lack them. Everything else a store does is in Store.

// ModelLookup tells whether an Eloquent model's row exists: the query
// SerializesModels runs to restore a job's model. It needs the app's
// database: the database store and a store with a Repository have it.
// Without it, jobs that hold models are given back to PHP workers.
type ModelLookup interface {
	ModelExists(ctx context.Context, table, key string, id any) (bool, error)
}

// LeftReporter is a store whose claims leave jobs in place for other
// workers where they stand (a Redis queue, whose list a claim cannot
// reorder: the jobs of classes the worker does not run, looked past):
// what the last claim on each queue left. A store whose claims skip such
// jobs without touching them (the database queue) has none to report. A
// LeftReporter may also export them as Prometheus metrics (a
// prometheus.Collector, as the Redis store is).
type LeftReporter interface {
	LeftNow() []LeftJobs
}

// Waiter is a store that can wait for a job to be pushed (a Redis queue's
// :notify lists, which every push of Laravel's fills) instead of the
// worker sleeping after a claim that found nothing.
type Waiter interface {
	// WaitForJob waits until a claim on queues may find a job (one was
	// pushed, or a delayed one is due), at most d, or until ctx ends. It
	// returns true when the caller should claim at once, false when d
	// passed or ctx ended. ErrNotSupported: it cannot wait on these queues
	// now (the caller sleeps instead). One wait at a time per store.
	WaitForJob(ctx context.Context, queues []string, d time.Duration) (bool, error)
}
