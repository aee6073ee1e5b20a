package database

import (
	"maps"

	"github.com/laraworker/laraworker/internal/cache/dbcache"
	"github.com/laraworker/laraworker/jobqueue"
)

// Cache returns the app's database cache store, or nil when the app's
// default store is not "database" (file, redis... Go cannot share those).
func (q *Queue) Cache() *dbcache.Cache { return q.cache }

// Locks returns the database store's locks on the queue's database:
// table DB_CACHE_LOCK_TABLE (default cache_locks), keys prefixed with the
// cache prefix, as CacheManager builds the database store.
func (q *Queue) Locks() *dbcache.Locks { return q.locks }

// SharedCache is jobqueue.SharedState's: the database cache store when it
// is the app's default store, else Options.Shared.Cache (nil when Go
// shares no store with PHP; a nil *dbcache.Cache never becomes a non-nil
// interface).
func (q *Queue) SharedCache() jobqueue.Cache {
	if q.cache == nil {
		return q.shared.Cache
	}
	return q.cache
}

// LockStores is jobqueue.SharedState's: the "database" store's locks on
// the queue's database, and Options.Shared.Locks.
func (q *Queue) LockStores() map[string]jobqueue.LockStore {
	out := map[string]jobqueue.LockStore{"database": q.locks}
	maps.Copy(out, q.shared.Locks)
	return out
}

// DefaultCacheStore is the app's default cache store's name.
func (q *Queue) DefaultCacheStore() string { return q.cfg.CacheStore }

// StateStores is jobqueue.SharedState's: the app's "database" cache
// store on the queue's database (its cache and cache_locks tables), where
// job middleware keep their state when it is the app's store, and
// Options.Shared.StateStores. Keys are whole: the cache prefix is the
// caller's (StateStore.Prefix).
func (q *Queue) StateStores() map[string]jobqueue.StateStore {
	out := map[string]jobqueue.StateStore{"database": {
		Driver: "database", Prefix: q.cfg.CachePrefix,
		Table: q.cfg.CacheTable, LockTable: q.cfg.CacheLockTable, LockTimeout: dbcache.DefaultLockTimeout,
		Cache: dbcache.New(q.conn, q.cfg.CacheTable, ""),
		Locks: dbcache.NewLocks(q.conn, q.cfg.CacheLockTable, ""),
	}}
	maps.Copy(out, q.shared.StateStores)
	return out
}

// DurationLimiters is jobqueue.SharedState's: Options.Shared's (they
// live in Redis; nil without).
func (q *Queue) DurationLimiters() map[string]jobqueue.DurationLimiter {
	return maps.Clone(q.shared.DurationLimiters)
}

// The contract: what every store does, the repository a store whose jobs
// live elsewhere is built on, and the optional model lookup.
var (
	_ jobqueue.Store       = (*Queue)(nil)
	_ jobqueue.Repository  = (*Queue)(nil)
	_ jobqueue.ModelLookup = (*Queue)(nil)
)
