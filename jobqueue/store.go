package jobqueue

import (
	"context"
	"time"
)

// Store is the contract: what every store does, one Laravel queue
// connection. Package store/database (Laravel's database queue) and
// package store/redis (its Redis queue) implement it; the worker, the CLI
// and the dashboard run on it unchanged, and reach a store through it
// alone.
//
// Its parts are named by who uses them: Queue is the worker's side (claims
// and outcomes), Admin artisan's queue:* commands on the jobs, FailedJobs
// and Batches Laravel's failed job provider and batch repository, Schema
// the tables they live in, SharedState the app's cache stores where PHP and
// Go workers share state. A store implements every method; one its backend
// cannot do (beanstalkd cannot clear a tube, SQS cannot read a job by id)
// returns an error wrapping ErrNotSupported, which callers report as such.
//
// Three capabilities are optional, found by a type assertion, because a
// store may genuinely lack them: ModelLookup (the app's database, where
// SerializesModels looks models up), LeftReporter (the jobs a claim that
// cannot skip them leaves in place, on a Redis list) and Waiter (a signal
// of pushes to wait on instead of polling, Redis's :notify lists).
type Store interface {
	Queue
	Admin
	FailedJobs
	Batches
	Schema
	SharedState
}

// Queue is the worker's side of a store: the queue it claims jobs from
// and writes their outcomes to.
//
// Every method is called from several goroutines at once. A write that
// returns an error is retried by the worker until it succeeds (or the
// worker gives up at shutdown), so writes must be safe to repeat.
//
// Writes are fenced. A claimed job's JobRow carries its reservation in
// ReservedAt: the value the claim set, or the one Extend last handed back.
// Every write about the job holds only while the store still has the job
// under that reservation; when another worker has reclaimed it (after
// retry_after) or finished it, the write changes nothing at all (no
// released copy, no failed job, no chain link, no batch counter) and
// returns ErrReservationLost (Delete lists the job as lost; Extend leaves
// it out). The worker then drops its outcome.
type Queue interface {
	// Claim reserves up to n jobs of the first queue, in priority order,
	// that has any claimable ones, counting an attempt for each as
	// Laravel does. It returns no jobs and no error when every queue is
	// empty. A *ClaimError names a job that could not be reserved
	// because of the job itself (the worker fails that job as it was
	// selected, with ReservedAt as it was). Like opts' slices, queues
	// may be passed again claim after claim: a store reads it, never
	// writes it.
	Claim(ctx context.Context, queues []string, n int, opts ClaimOptions) ([]JobRow, error)
	// CountClaimable counts what Claim could take now, without taking it
	// (a claim that skips locked rows can come back empty while jobs wait).
	CountClaimable(ctx context.Context, queues []string, opts ClaimOptions) (int64, error)
	// Delete removes finished jobs that have nothing to write after them
	// and returns the ones whose reservation was lost (left alone). On an
	// error nothing may be assumed deleted.
	Delete(ctx context.Context, jobs []JobRow) (lost []JobRow, err error)
	// Finish removes a finished job together with its followup (the next
	// link of its chain, its batch's success, its hook jobs), all or
	// nothing.
	Finish(ctx context.Context, job JobRow, f Followup) error
	// Release puts a job back to run again after delay; its attempt counts.
	Release(ctx context.Context, job JobRow, delay time.Duration) error
	// Fail moves a job to the failed jobs with the exception text, under
	// uuid (the payload's, or a fresh one when it has none), together with
	// its batch's failure (f.Batch) and hook jobs, all or nothing.
	Fail(ctx context.Context, job JobRow, uuid, exception string, f Followup) error
	// Unreserve gives a job back as it was before the claim, attempt not
	// counted: it is not this worker's to run (or shutdown cut it short).
	Unreserve(ctx context.Context, job JobRow) error
	// Extend refreshes the reservations of jobs still running, so no other
	// worker takes them after retry_after, and returns those it refreshed
	// with their new ReservedAt; a job left out lost its reservation. On
	// an error it returns the jobs refreshed before it; the rest are in an
	// unknown state (not known lost).
	Extend(ctx context.Context, jobs []JobRow) (refreshed []JobRow, err error)

	// Connection is the Laravel queue connection the store serves (the
	// name failed jobs record, "database" by default).
	Connection() string
	// DefaultQueue is the connection's default queue (config/queue.php's
	// "queue"): the queue a claim of "" serves, as Laravel's getQueue()
	// resolves an empty name.
	DefaultQueue() string
	// RetryAfter is how long a reservation holds before other workers may
	// take the job again.
	RetryAfter() time.Duration
	// HooksQueue is the queue connection and queue the bridge's hook jobs
	// (Followup.Hooks) go to, written in the transactions of the outcomes:
	// a queue of a database queue connection in the database the outcomes
	// are written to. ok is false when the store was opened without one;
	// a Followup with Hooks is then refused.
	HooksQueue() (connection, queue string, ok bool)
	// TraceDestination names a queue as the app's OpenTelemetry
	// instrumentation does in PHP's spans: messaging.system ("" when PHP's
	// names none) and the destination (the queue's name, or what the
	// driver calls it: "queues:<name>" on Redis).
	TraceDestination(queue string) (system, name string)
}
