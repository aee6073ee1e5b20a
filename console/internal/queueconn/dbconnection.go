package queueconn

import (
	"context"

	"github.com/laraworker/laraworker/internal/cache/redisshared"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/rs/zerolog"
)

// This file is the database driver's constructor: the one place of the
// CLI that names package store/database. Everything else reaches the store through
// the connection's jobqueue interfaces.

// openDatabaseConnection opens Laravel's database queue on cfg's database,
// with laraworker's own tables there, and what the app keeps in Redis for
// its workers (a redis default cache store, the ...WithRedis middleware's
// connections) when its config says it.
func openDatabaseConnection(ctx context.Context, cfg appconfig.Config, info appconfig.AppInfo, opts Options) (*Connection, error) {
	app, err := openAppDatabase(ctx, cfg, info, opts)
	if err != nil {
		return nil, err
	}
	q := app.db
	conn := newConnection(cfg, q, opts)
	conn.SharedRedisErr = app.sharedErr
	qcfg := q.Config()
	conn.sql = &QueueDatabase{
		DB: q.DB(), Dialect: q.Dialect(), Fleet: fleet.On(q.DB(), q.Dialect(), qcfg.TablePrefix),
		JobsTable: qcfg.JobsTable, FailedTable: qcfg.FailedTable, Location: qcfg.Location(), RetryAfter: q.RetryAfter(),
	}
	conn.Ping = q.DB().PingContext
	conn.close = app.Close
	conn.claimPlan = func(ctx context.Context, log zerolog.Logger) (string, string) {
		return q.LockClause(), detectClaimPath(ctx, q, opts.Exact, log)
	}
	return conn, nil
}

// sharedRedis opens, for the database store, what the app keeps in Redis
// for its workers, as package store/redis does beside a redis queue: with
// a redis default cache store, Go then reads `php artisan queue:restart`'s
// signal and the maxExceptions counters there and shares unique locks and
// RateLimited/WithoutOverlapping state with PHP. The clients dial on first
// use. An app whose Redis config was not read gets empty Stores (the
// startup warning of cachewarning.go then says what is not shared); one
// that cannot be opened, empty Stores and the error.
func sharedRedis(cfg appconfig.Config, info appconfig.AppInfo, log zerolog.Logger) (*redisshared.Stores, error) {
	r := info.SharedRedis
	if r == nil {
		return &redisshared.Stores{}, nil
	}
	app := redisshared.App{Redis: map[string]any(r.Redis), StoreName: cfg.CacheStore, CachePrefix: cfg.CachePrefix, Version: info.Version}
	// A cache store set by LARAWORKER_CACHE_STORE wins over the app's
	// array: the redis store is opened only when it is still the one used.
	if cfg.CacheStore == "redis" {
		app.CacheStore = r.CacheStore
	}
	st, err := redisshared.Open(app)
	if err != nil {
		if !redisshared.IsRedisStore(app.CacheStore) {
			return &redisshared.Stores{}, nil
		}
		log.Warn().Err(err).Msg("the app's redis cache store cannot be opened: queue:restart, maxExceptions, unique locks and job middleware state are not shared with PHP")
		return &redisshared.Stores{}, err
	}
	return st, nil
}

// detectClaimPath finds out whether the claim index is there (the worker
// then claims through it) and says which claim the worker runs. On
// PostgreSQL without the index and without statistics it warns once:
// the claims then read the table in id order (sqldb turns sorting off on
// the worker's sessions), past every delayed row and every row of another
// queue ahead of the ready ones.
// The worker never runs ANALYZE on the user's table itself.
func detectClaimPath(ctx context.Context, q *database.Queue, exact bool, log zerolog.Logger) string {
	// Once, when claims with Laravel's query (no claim index) read far
	// more rows than they take: delayed rows or other classes' rows ahead.
	q.OnCostlyClaims(func(c database.ClaimCost) {
		log.Warn().Str("table", q.Config().JobsTable).Str("queue", c.Queue).Int64("rows_read", c.RowsRead).
			Int("claimed", c.Claimed).Dur("claim_time", c.Took).Msg(c.String())
	})
	info, err := q.DetectClaimPath(ctx)
	if err != nil {
		log.Warn().Err(err).Msg("could not look for the claim index; claiming with Laravel's query")
		return string(database.ClaimPathLaravel)
	}
	if exact {
		return "laravel-exact"
	}
	if info.PreviousIndex {
		log.Warn().Str("table", q.Config().JobsTable).
			Msg("the jobs table has the claim index of an earlier laraworker version, which this one does not use (it holds reserved_at, so every claim rewrites it): run `laraworker tables --index` to replace it")
	}
	if info.NoStatistics {
		log.Warn().Str("table", q.Config().JobsTable).
			Msg("PostgreSQL has no statistics for the jobs table: claims read it in id order, past every delayed row and every row of another queue ahead of the ready ones. Run `laraworker tables --index` (plans that do not depend on statistics) or ANALYZE the table")
	}
	return string(info.Path)
}

// store/database is the hooks queue as package store/database takes it.
func (h *HooksQueue) dbqueue() *database.HooksQueue {
	if h == nil {
		return nil
	}
	return &database.HooksQueue{Connection: h.Connection, Table: h.Table, Queue: h.Queue}
}
