package jobqueue

import (
	"context"
	"time"
)

// The optional capabilities of a store. A worker asks for them with a type
// assertion (store.(jobqueue.CacheAccess)); each returns interfaces, never
// a driver's concrete types, so any backend can offer them.

// Batches reads Laravel's job batches (the job_batches table), to know a
// batch's options and whether it was cancelled. The counters are written
// by the Store with each job's outcome (Followup).
type Batches interface {
	FindBatch(ctx context.Context, id string) (Batch, error)
}

// BatchAdmin is a store that lists and cancels Laravel's job batches (the
// dashboard's batches page), as Laravel's DatabaseBatchRepository does.
type BatchAdmin interface {
	Batches
	// ListBatches returns up to limit batches whose id sorts below before
	// (all when before is ""), highest id first: DatabaseBatchRepository::get,
	// what Horizon's batches page lists (ids are ordered UUIDs, so the
	// newest come first).
	ListBatches(ctx context.Context, before string, limit int) ([]Batch, error)
	// CancelBatch is Batch::cancel(): cancelled_at and finished_at set to
	// now. It returns ErrBatchNotFound when there is no such batch.
	CancelBatch(ctx context.Context, id string) error
}

// JobFinder reads one queued job (a jobs row, reserved or not) by id or by
// its payload's uuid: `laraworker inspect --id` and `--uuid`.
type JobFinder interface {
	// FindJob returns the job with id, or ErrJobNotFound.
	FindJob(ctx context.Context, id int64) (JobRow, error)
	// FindJobByUUID returns the job whose payload has uuid, or
	// ErrJobNotFound. A store without an index on the uuid may read every
	// job to find it.
	FindJobByUUID(ctx context.Context, uuid string) (JobRow, error)
}

// Cache is the part of Laravel's cache store that PHP and Go workers
// share: the queue:restart signal and maxExceptions counters. Values are
// PHP-serialized.
type Cache interface {
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	Put(ctx context.Context, key string, serialized []byte, ttl time.Duration) error
	Increment(ctx context.Context, key string) (n int64, ok bool, err error)
	Forget(ctx context.Context, key string) error
}

// LockStore releases Laravel cache locks (unique jobs' locks) in one cache
// store.
type LockStore interface {
	// ForceRelease deletes the lock whoever holds it.
	ForceRelease(ctx context.Context, name string) error
	// ReleaseOwned deletes the lock only while owner holds it.
	ReleaseOwned(ctx context.Context, name, owner string) error
}

// CacheAccess is a store that reaches the app's cache stores.
type CacheAccess interface {
	// SharedCache is the app's default cache store when Go can share it
	// with PHP (Laravel's database store, or a redis store whose
	// connection the store was given); nil otherwise.
	SharedCache() Cache
	// LockStores are the cache stores whose locks the store can release,
	// by config/cache.php store name ("database").
	LockStores() map[string]LockStore
	// DefaultCacheStore is the app's default cache store's name
	// (CACHE_STORE, or CACHE_DRIVER before Laravel 11).
	DefaultCacheStore() string
}

// ModelLookup tells whether an Eloquent model's row exists: the query
// SerializesModels runs to restore a job's model.
type ModelLookup interface {
	ModelExists(ctx context.Context, table, key string, id any) (bool, error)
}

// ErrorClassifier is a store that can tell setup problems and lost
// connections from passing faults in the errors it returns.
type ErrorClassifier interface {
	// IsLostConnection reports whether the store's connection is gone (a
	// worker stops, as Laravel's DetectsLostConnections does).
	IsLostConnection(err error) bool
}

// HookPusher is a store that writes the bridge's hook jobs (Followup.Hooks)
// in the transactions of its outcomes: onto a queue of a database queue
// connection in the database its outcomes are written to.
type HookPusher interface {
	// HooksQueue is the queue connection and queue the hook jobs go to;
	// ok is false when the store was opened without one (a Followup with
	// Hooks is then refused).
	HooksQueue() (connection, queue string, ok bool)
}
