package worker

import "github.com/laraworker/laraworker/jobqueue"

// Store is the queue a Worker claims jobs from and writes their outcomes
// to: jobqueue.Store, which package dbqueue's *Queue implements for
// Laravel's database queue.
//
// Deprecated: use jobqueue.Store; this alias stays for one release.
type Store = jobqueue.Store

// Batches reads Laravel's job batches.
//
// Deprecated: use jobqueue.Batches; this alias stays for one release.
type Batches = jobqueue.Batches

// Cache is the part of Laravel's cache store that PHP and Go workers
// share.
//
// Deprecated: use jobqueue.Cache; this alias stays for one release.
type Cache = jobqueue.Cache

// LockStore releases Laravel cache locks in one cache store.
//
// Deprecated: use jobqueue.LockStore; this alias stays for one release.
type LockStore = jobqueue.LockStore

// storeCache is the cache a store shares with PHP, if it has one.
func storeCache(store jobqueue.Store) jobqueue.Cache {
	if s, ok := store.(jobqueue.CacheAccess); ok {
		return s.SharedCache()
	}
	return nil
}

// storeLocks are the lock stores the store reaches, by cache store name.
func storeLocks(store jobqueue.Store) map[string]jobqueue.LockStore {
	if s, ok := store.(jobqueue.CacheAccess); ok {
		return s.LockStores()
	}
	return nil
}

// storeCacheName is the app's default cache store name, when the store
// knows it.
func storeCacheName(store jobqueue.Store) string {
	if s, ok := store.(jobqueue.CacheAccess); ok {
		return s.DefaultCacheStore()
	}
	return ""
}
