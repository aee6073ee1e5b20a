package console

import (
	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/dbqueue"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/redislock"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
)

// lockStores gives the worker every cache store whose unique-job locks Go
// can release: the database store (cache_locks, on the queue's database)
// and the redis store (the app's Redis lock connection; its key prefix
// follows --laravel-version when given). The Redis
// client dials on first use, so an app without Redis costs nothing; a
// release that fails is logged by the worker. The returned func closes
// what was opened.
func lockStores(wcfg *worker.Config, q *dbqueue.Queue, cfg appconfig.Config, log zerolog.Logger) func() {
	wcfg.Locks = map[string]jobqueue.LockStore{"database": q.Locks()}
	wcfg.CacheStore = cfg.CacheStore
	redisCfg := cfg.Redis
	if wcfg.LaravelVersion != "" {
		redisCfg.StorePrefix = appconfig.RedisStorePrefix(cfg.CachePrefix, wcfg.LaravelVersion)
	}
	r, err := redislock.New(redisCfg)
	if err != nil {
		log.Warn().Err(err).Msg("unique-job locks in the redis cache store cannot be released by Go")
		return func() {}
	}
	wcfg.Locks["redis"] = r
	return func() { _ = r.Close() }
}
