package worker

import (
	"context"
	"time"

	"github.com/laraworker/laraworker/laravel"
)

// Store is the queue a Worker claims jobs from and writes their outcomes
// to. *laravel.Queue, Laravel's database queue on MySQL/MariaDB,
// PostgreSQL and SQLite, implements it. The worker never looks at how a
// store keeps its jobs: another backend (Laravel's Redis queue, say)
// implements these methods and the worker runs on it unchanged.
//
// Every method is called from several goroutines at once. A write that
// returns an error is retried by the worker until it succeeds (or the
// worker gives up at shutdown), so writes must be safe to repeat.
type Store interface {
	// Claim reserves up to n jobs of the first queue, in priority order,
	// that has any claimable ones, counting an attempt for each as
	// Laravel does. It returns no jobs and no error when every queue is
	// empty. A *laravel.ClaimError names a row that could not be reserved
	// because of the row itself (the worker fails that row).
	Claim(ctx context.Context, queues []string, n int, opts laravel.ClaimOptions) ([]laravel.JobRow, error)
	// CountClaimable counts what Claim could take now, without taking it
	// (a claim that skips locked rows can come back empty while jobs wait).
	CountClaimable(ctx context.Context, queues []string, opts laravel.ClaimOptions) (int64, error)
	// Delete removes finished jobs.
	Delete(ctx context.Context, jobs []laravel.JobRow) error
	// Release puts a job back to run again after delay; its attempt counts.
	Release(ctx context.Context, job laravel.JobRow, delay time.Duration) error
	// Fail moves a job to the failed jobs with the exception text, under
	// uuid (the payload's, or a fresh one when it has none).
	Fail(ctx context.Context, job laravel.JobRow, uuid, exception string) error
	// Unreserve gives a job back as it was before the claim, attempt not
	// counted: it is not this worker's to run.
	Unreserve(ctx context.Context, job laravel.JobRow) error
	// Extend refreshes the reservations of jobs still running, so no other
	// worker takes them after retry_after.
	Extend(ctx context.Context, jobs []laravel.JobRow) error
	// Push adds a job (the next link of a chain) and returns its id.
	Push(ctx context.Context, item laravel.PushItem) (int64, error)
	// Connection is the Laravel queue connection the store serves (the
	// name failed jobs record, "database" by default).
	Connection() string
	// RetryAfter is how long a reservation holds before other workers may
	// take the job again.
	RetryAfter() time.Duration
}

// Batches is Laravel's job batch repository (the job_batches table).
// *laravel.Queue implements it.
type Batches interface {
	FindBatch(ctx context.Context, id string) (laravel.Batch, error)
	RecordBatchSuccess(ctx context.Context, batchID, jobUUID string) (laravel.BatchCounts, error)
	RecordBatchFailure(ctx context.Context, batchID, jobUUID string, allowFailures bool) (laravel.BatchCounts, error)
}

// Cache is the part of Laravel's cache store that PHP and Go workers
// share: the queue:restart signal and maxExceptions counters. Values are
// PHP-serialized. *laravel.Cache (the database store) implements it.
type Cache interface {
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	Put(ctx context.Context, key string, serialized []byte, ttl time.Duration) error
	Increment(ctx context.Context, key string) (n int64, ok bool, err error)
	Forget(ctx context.Context, key string) error
}

// storeCache is the cache a store shares, if it has one: a laravel.Queue
// on an app whose cache store is "database". A nil *laravel.Cache must not
// become a non-nil Cache interface.
func storeCache(store Store) Cache {
	if s, ok := store.(interface{ Cache() *laravel.Cache }); ok {
		if c := s.Cache(); c != nil {
			return c
		}
	}
	return nil
}
