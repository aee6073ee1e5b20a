package jobqueue

import (
	"context"
)

// Laravel's job middleware (WithoutOverlapping, RateLimited,
// ThrottlesExceptions and their ...WithRedis variants) keep their state in
// the app's cache stores and on its Redis connections: an overlap lock, a
// limiter's counter and timer, a DurationLimiter hash. A Go worker that
// applies the same middleware to the same class shares that state with
// PHP workers only if it reads and writes it exactly as Laravel does:
// through a StateStore's Cache and LockStore, and a DurationLimiter, which
// a store offers with SharedState.
//
// Keys are whole: the StateStore's Cache and Locks put nothing before the
// key they are given, which is the cache table's key column (database
// store) or the Redis key before the Redis client's own prefix (redis
// store). The bridge records such keys (cache_key); a worker computing a
// key itself puts StateStore.Prefix before the name, as the app's store
// does.

// DurationLimiter is Laravel's Illuminate\Redis\Limiters\DurationLimiter
// on one Redis connection: a hash (start, end, count) per key that lets
// maxLocks acquisitions through per window of decaySeconds.
type DurationLimiter interface {
	// Acquire counts one acquisition (DurationLimiter::acquire).
	Acquire(ctx context.Context, key string, maxLocks, decaySeconds int64) (DurationWindow, error)
	// TooManyAttempts reads the window without counting
	// (DurationLimiter::tooManyAttempts).
	TooManyAttempts(ctx context.Context, key string, maxLocks, decaySeconds int64) (DurationWindow, error)
	// Clear deletes the key (DurationLimiter::clear).
	Clear(ctx context.Context, key string) error
}

// DurationWindow is what a DurationLimiter call returned, as the PHP
// object's fields hold it afterwards.
type DurationWindow struct {
	// Acquired: Acquire let this acquisition through (count <= maxLocks).
	Acquired bool
	// DecaysAt is the Unix time the window ends ($decaysAt).
	DecaysAt int64
	// Remaining is $remaining: maxLocks minus the count.
	Remaining int64
}

// TooMany is tooManyAttempts()'s answer: nothing remains in the window.
func (w DurationWindow) TooMany() bool { return w.Remaining <= 0 }

// StateStore is one of the app's cache stores (config/cache.php) as a Go
// worker reaches it, described as the bridge describes the stores it
// records (bridge/PROTOCOL.md, "stores").
type StateStore struct {
	// Driver is the store's driver: "database" or "redis".
	Driver string
	// Prefix is what the app's store puts before every name (the cache
	// prefix; on the redis store of Laravel 8-10 with ":" appended).
	Prefix string
	// Table and LockTable are the database store's tables (behind the
	// connection's table prefix); LockTimeout is its expiry, in seconds,
	// of a lock taken for 0 seconds (86400 before Laravel 10.17).
	Table, LockTable string
	LockTimeout      int64
	// Cache and Locks take whole keys (see above). Either may be nil when
	// Go reaches only one side of the store.
	Cache Cache
	Locks LockStore
}
