package console

import (
	"maps"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/redislimiter"
	"github.com/laraworker/laraworker/redislock"
	"github.com/rs/zerolog"
)

// middlewareState is where job middleware keep their state, as the
// worker's Config takes it.
type middlewareState struct {
	stores   map[string]jobqueue.StateStore
	limiters map[string]jobqueue.DurationLimiter
}

// lockStores are every cache store whose unique-job locks Go can release,
// by cache store name: the store's own (the database store's cache_locks,
// on the queue's database) and the redis store (the app's Redis lock
// connection; its key prefix follows the Laravel version when known). The
// Redis client dials on first use, so an app without Redis costs nothing;
// a release that fails is logged by the worker. The same connection gives
// the job middleware the redis store's locks and, under its name, a
// DurationLimiter, beside what the store reaches itself. The returned
// func closes what was opened.
func lockStores(store jobqueue.Store, cfg appconfig.Config, version string, log zerolog.Logger) (map[string]jobqueue.LockStore, middlewareState, func()) {
	locks := map[string]jobqueue.LockStore{}
	state := middlewareState{stores: map[string]jobqueue.StateStore{}, limiters: map[string]jobqueue.DurationLimiter{}}
	if s, ok := store.(jobqueue.CacheAccess); ok {
		maps.Copy(locks, s.LockStores())
	}
	if s, ok := store.(jobqueue.MiddlewareState); ok {
		maps.Copy(state.stores, s.StateStores())
		maps.Copy(state.limiters, s.DurationLimiters())
	}
	if _, ok := locks["redis"]; ok {
		return locks, state, func() {}
	}
	redisCfg := cfg.Redis
	if version != "" {
		redisCfg.StorePrefix = appconfig.RedisStorePrefix(cfg.CachePrefix, version)
	}
	r, err := redislock.New(redisCfg)
	if err != nil {
		log.Warn().Err(err).Msg("unique-job locks in the redis cache store cannot be released by Go")
		return locks, state, func() {}
	}
	locks["redis"] = r
	if _, ok := state.stores["redis"]; !ok {
		// Only the lock connection is known here: overlap locks, not the
		// limiters' values.
		state.stores["redis"] = jobqueue.StateStore{Driver: "redis", Prefix: redisCfg.StorePrefix,
			Locks: redislock.NewWithClient(r.Client(), redisCfg.Prefix)}
	}
	if _, ok := state.limiters[redisCfg.LockConnection]; !ok && redisCfg.LockConnection != "" {
		state.limiters[redisCfg.LockConnection] = redislimiter.New(r.Client(), redisCfg.Prefix, nil)
	}
	return locks, state, func() { _ = r.Close() }
}
