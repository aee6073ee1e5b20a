package console

import (
	"maps"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/redislock"
	"github.com/rs/zerolog"
)

// lockStores are every cache store whose unique-job locks Go can release,
// by cache store name: the store's own (the database store's cache_locks,
// on the queue's database) and the redis store (the app's Redis lock
// connection; its key prefix follows the Laravel version when known). The
// Redis client dials on first use, so an app without Redis costs nothing;
// a release that fails is logged by the worker. The returned func closes
// what was opened.
func lockStores(store jobqueue.Store, cfg appconfig.Config, version string, log zerolog.Logger) (map[string]jobqueue.LockStore, func()) {
	locks := map[string]jobqueue.LockStore{}
	if s, ok := store.(jobqueue.CacheAccess); ok {
		maps.Copy(locks, s.LockStores())
	}
	if _, ok := locks["redis"]; ok {
		return locks, func() {}
	}
	redisCfg := cfg.Redis
	if version != "" {
		redisCfg.StorePrefix = appconfig.RedisStorePrefix(cfg.CachePrefix, version)
	}
	r, err := redislock.New(redisCfg)
	if err != nil {
		log.Warn().Err(err).Msg("unique-job locks in the redis cache store cannot be released by Go")
		return locks, func() {}
	}
	locks["redis"] = r
	return locks, func() { _ = r.Close() }
}
