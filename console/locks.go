package console

import (
	"fmt"
	"maps"

	"github.com/laraworker/laraworker/internal/cache/redislimiter"
	"github.com/laraworker/laraworker/internal/cache/redislock"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/redis/go-redis/v9"
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
func lockStores(store jobqueue.Store, cfg appconfig.Config, info appconfig.AppInfo, version string, log zerolog.Logger) (map[string]jobqueue.LockStore, middlewareState, func()) {
	locks := map[string]jobqueue.LockStore{}
	state := middlewareState{stores: map[string]jobqueue.StateStore{}, limiters: map[string]jobqueue.DurationLimiter{}}
	maps.Copy(locks, store.LockStores())
	maps.Copy(state.stores, store.StateStores())
	maps.Copy(state.limiters, store.DurationLimiters())
	if _, ok := locks["redis"]; ok {
		return locks, state, func() {}
	}
	redisCfg := cfg.Redis
	if version != "" {
		redisCfg.StorePrefix = appconfig.RedisStorePrefix(cfg.CachePrefix, version)
	}
	r, connPrefix, err := redisLockStore(redisCfg, info.SharedRedis, version)
	if err != nil {
		log.Warn().Err(err).Msg("unique-job locks in the redis cache store cannot be released by Go")
		return locks, state, func() {}
	}
	locks["redis"] = r
	if _, ok := state.stores["redis"]; !ok {
		// Only the lock connection is known here: overlap locks, not the
		// limiters' values.
		state.stores["redis"] = jobqueue.StateStore{Driver: "redis", Prefix: redisCfg.StorePrefix,
			Locks: redislock.NewWithClient(r.Client(), connPrefix)}
	}
	if _, ok := state.limiters[redisCfg.LockConnection]; !ok && redisCfg.LockConnection != "" {
		state.limiters[redisCfg.LockConnection] = redislimiter.New(r.Client(), connPrefix, nil)
	}
	return locks, state, func() { _ = r.Close() }
}

// redisLockStore connects to the redis cache store's lock connection and
// says its key prefix: as config/database.php defines it when the app's
// database.redis was read (a Sentinel or TLS connection as the app
// configures it), else from the .env's REDIS_* variables.
func redisLockStore(redisCfg appconfig.RedisConfig, shared *appconfig.SharedRedisConfig, version string) (*redislock.Store, string, error) {
	if shared == nil || version == "" {
		r, err := redislock.New(redisCfg)
		return r, redisCfg.Prefix, err
	}
	conn, err := redisproto.RedisConnection(redisCfg.LockConnection, map[string]any(shared.Redis), version)
	if err != nil {
		return nil, "", err
	}
	client, err := redisproto.NewClient(conn)
	if err != nil {
		return nil, "", err
	}
	single, ok := client.(*redis.Client)
	if !ok {
		client.Close()
		return nil, "", fmt.Errorf("the redis connection %q is a cluster; unique jobs' locks on a cluster are not supported", redisCfg.LockConnection)
	}
	return redislock.NewWithClient(single, conn.Prefix+redisCfg.StorePrefix), conn.Prefix, nil
}
