package jobqueue

import (
	"context"
	"time"
)

// Store is the queue a worker claims jobs from and writes their outcomes
// to: one Laravel queue connection. Package dbqueue's *Queue, Laravel's
// database queue on MySQL/MariaDB, PostgreSQL and SQLite, implements it.
// The worker never looks at how a store keeps its jobs: another backend
// (Laravel's Redis queue, say) implements these methods and the worker
// runs on it unchanged.
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
type Store interface {
	// Claim reserves up to n jobs of the first queue, in priority order,
	// that has any claimable ones, counting an attempt for each as
	// Laravel does. It returns no jobs and no error when every queue is
	// empty. A *ClaimError names a job that could not be reserved
	// because of the job itself (the worker fails that job as it was
	// selected, with ReservedAt as it was).
	Claim(ctx context.Context, queues []string, n int, opts ClaimOptions) ([]JobRow, error)
	// CountClaimable counts what Claim could take now, without taking it
	// (a claim that skips locked rows can come back empty while jobs wait).
	CountClaimable(ctx context.Context, queues []string, opts ClaimOptions) (int64, error)
	// Delete removes finished jobs that have nothing to write after them
	// and returns the ones whose reservation was lost (left alone). On an
	// error nothing may be assumed deleted.
	Delete(ctx context.Context, jobs []JobRow) (lost []JobRow, err error)
	// Finish removes a finished job together with its followup (the next
	// link of its chain, its batch's success), all or nothing.
	Finish(ctx context.Context, job JobRow, f Followup) error
	// Release puts a job back to run again after delay; its attempt counts.
	Release(ctx context.Context, job JobRow, delay time.Duration) error
	// Fail moves a job to the failed jobs with the exception text, under
	// uuid (the payload's, or a fresh one when it has none), together with
	// its batch's failure (f.Batch), all or nothing.
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
	// RetryAfter is how long a reservation holds before other workers may
	// take the job again.
	RetryAfter() time.Duration
}
