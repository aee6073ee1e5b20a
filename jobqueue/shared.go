package jobqueue

import (
	"context"
	"time"
)

// SharedState is how a store reaches the app's cache stores and Redis
// connections: where PHP and Go workers share the queue:restart signal,
// the maxExceptions counters, unique jobs' locks, Laravel's queue pauses
// and the state of Laravel's job middleware. They are the app's, not the
// queue backend's: a store gets them from the app's configuration (a
// Repository has them), and returns empty values for what Go cannot
// share (a file cache store).
type SharedState interface {
	// SharedCache is the app's default cache store when Go can share it
	// with PHP (Laravel's database store, or a redis store whose
	// connection the store was given); nil otherwise.
	SharedCache() Cache
	// LockStores are the cache stores whose locks the store can take and
	// release, by config/cache.php store name ("database").
	LockStores() map[string]LockStore
	// DefaultCacheStore is the app's default cache store's name
	// (CACHE_STORE, or CACHE_DRIVER before Laravel 11).
	DefaultCacheStore() string
	// StateStores are the app's cache stores Go reaches, by their
	// config/cache.php name ("database", "redis"), as Laravel's job
	// middleware keep their state in them (see StateStore).
	StateStores() map[string]StateStore
	// DurationLimiters are DurationLimiters on the app's Redis
	// connections, by their config/database.php name ("default").
	DurationLimiters() map[string]DurationLimiter
}

// Cache is one of the app's cache stores as PHP and Go workers share it:
// the queue:restart signal and maxExceptions counters (Get, Put,
// Increment, Forget), and what Laravel's cache Repository does for
// RateLimiter (Add too). Values are PHP-serialized.
type Cache interface {
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	Put(ctx context.Context, key string, serialized []byte, ttl time.Duration) error
	Increment(ctx context.Context, key string) (n int64, ok bool, err error)
	Forget(ctx context.Context, key string) error
	// Add stores the value for ttl only when the key is missing or
	// expired (Repository::add) and reports whether it did.
	Add(ctx context.Context, key string, serialized []byte, ttl time.Duration) (bool, error)
}

// LockStore takes and releases Laravel cache locks (Cache::lock: unique
// jobs' locks, WithoutOverlapping's) in one cache store.
type LockStore interface {
	// Acquire is Lock::get(): it takes the lock name for owner for seconds
	// and reports whether it did (false: another owner holds it). 0 seconds
	// is the store's own default: no expiry on Redis, the store's lock
	// timeout on the database store.
	Acquire(ctx context.Context, name, owner string, seconds int64) (bool, error)
	// ForceRelease deletes the lock whoever holds it.
	ForceRelease(ctx context.Context, name string) error
	// ReleaseOwned deletes the lock only while owner holds it.
	ReleaseOwned(ctx context.Context, name, owner string) error
}
