package jobqueue

import (
	"context"
	"time"
)

// Batches is Laravel's batch repository (DatabaseBatchRepository, the
// job_batches table) as the worker and the dashboard read it. The
// counters are written by the store with each job's outcome (Followup).
type Batches interface {
	// FindBatch reads a batch, or returns ErrBatchNotFound.
	FindBatch(ctx context.Context, id string) (Batch, error)
	// ListBatches returns up to limit batches whose id sorts below before
	// (all when before is ""), highest id first: DatabaseBatchRepository::get,
	// what Horizon's batches page lists (ids are ordered UUIDs, so the
	// newest come first).
	ListBatches(ctx context.Context, before string, limit int) ([]Batch, error)
	// CancelBatch is Batch::cancel(): cancelled_at and finished_at set to
	// now. It returns ErrBatchNotFound when there is no such batch.
	CancelBatch(ctx context.Context, id string) error
}

// RetryPusher pushes a failed job's payload (as a retry rewrote it) back
// onto the queue it failed on and returns the new job's id (0 where ids
// are not numbers): the store's own push, for Repository.RetryTo.
type RetryPusher func(ctx context.Context, f FailedJob, payload []byte) (int64, error)

// Repository is what Laravel keeps in the app's database whatever the
// queue driver: the failed jobs (failed_jobs, the database-uuids failed
// job provider), the batches (job_batches), the bridge's hook jobs on a
// database queue, the models SerializesModels restores, and the app's
// cache stores. A store whose jobs live elsewhere (Redis, SQS, beanstalkd)
// is built on one and writes there, as Laravel's workers do, what follows
// its outcomes; package store/database's *Queue is one, opened on the
// app's database with the store's connection name.
//
// The writes are those of Queue's outcomes, split in steps because the
// job itself is elsewhere: each returns what a retry needs to find a
// write whose commit's answer was lost (the uuid stored, the hook job's
// id), and the store orders them so that a crash between two leaves a
// state Laravel could have produced.
type Repository interface {
	// Connection is the queue connection the failed jobs are recorded
	// under (failed_jobs.connection): the store's.
	Connection() string
	// Ping checks that the database answers.
	Ping(ctx context.Context) error

	FailedJobs
	Batches
	SharedState
	ModelLookup

	// RecordFailed writes the failed_jobs row of a job of queue (the
	// failed job provider's log()). uuid and exception are taken as
	// Queue.Fail takes them ("<uuid>-<n>" when the uuid is in failed_jobs
	// already). It returns the uuid stored, also with an error: a commit
	// whose answer was lost may have stored it.
	RecordFailed(ctx context.Context, queue string, payload []byte, uuid, exception string) (string, error)
	// RetryTo and RetryAllTo are Admin's Retry and RetryAll with the
	// failed jobs pushed by push: each is pushed, then forgotten.
	RetryTo(ctx context.Context, ids []string, hook RetryHook, push RetryPusher) ([]RetryResult, error)
	RetryAllTo(ctx context.Context, queue string, hook RetryHook, push RetryPusher) ([]RetryResult, error)

	// RecordBatchSuccess and RecordBatchFailure update a batch's counters
	// for one job's outcome, atomically, as Laravel's Batch does
	// (recordSuccessfulJob, recordFailedJob: without allowFailures the
	// first failure cancels the batch), and return the counters after.
	RecordBatchSuccess(ctx context.Context, batchID, jobUUID string) (BatchCounts, error)
	RecordBatchFailure(ctx context.Context, batchID, jobUUID string, allowFailures bool) (BatchCounts, error)

	// HooksQueue is Queue's: where the bridge's hook jobs go.
	HooksQueue() (connection, queue string, ok bool)
	// RecordFailedWithHook is RecordFailed with the failure's hook job
	// written in the same transaction, parked (available after park);
	// it returns the uuid stored and the hook job's id.
	RecordFailedWithHook(ctx context.Context, queue string, payload []byte, uuid, exception string, hook []byte, park time.Duration) (string, int64, error)
	// SettleFailureHook is a failure's last write, once its job is gone
	// from its queue: the batch's failure (batch, when the job counts in
	// one) and the parked hook job hookID, rewritten with the batch
	// callbacks the update triggered and made available now, in one
	// transaction.
	SettleFailureHook(ctx context.Context, hookID int64, batch *BatchEntry, h *Hooks) error
	// ForgetFailedWithHook deletes a failed row and its parked hook job
	// together (the failure was not this worker's to record) and reports
	// whether the hook job was still parked.
	ForgetFailedWithHook(ctx context.Context, uuid string, hookID int64) (bool, error)
	// FindHookByUUID finds a hook job by its payload's uuid (0 when there
	// is none), for a write whose commit's answer was lost.
	FindHookByUUID(ctx context.Context, uuid string) (int64, error)
	// RecordBatchSuccessWithHooks is RecordBatchSuccess with the batch
	// callbacks' hook job the update triggers, in one transaction.
	RecordBatchSuccessWithHooks(ctx context.Context, batchID, jobUUID string, h *Hooks) error

	// MissingOutcomeTables and CreateOutcomeTables are Schema's for the
	// tables a store whose jobs live elsewhere keeps here: failed_jobs and
	// job_batches (and the cache table when the app's cache store is
	// database), no jobs table.
	MissingOutcomeTables(ctx context.Context) ([]MissingTable, error)
	CreateOutcomeTables(ctx context.Context) error
}
