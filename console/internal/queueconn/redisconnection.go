package queueconn

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/store/redis"
	"github.com/rs/zerolog"
)

// This file is the redis driver's constructor: the one place of the CLI
// that names package store/redis.

// openRedisConnection opens Laravel's Redis queue on the app's redis
// queue connection, with its failed jobs, batches and laraworker's own
// tables in the app's database.
func openRedisConnection(ctx context.Context, name string, cfg appconfig.Config, info appconfig.AppInfo, opts Options) (*Connection, error) {
	r := info.RedisQueue
	if r == nil {
		return nil, fmt.Errorf("queue connection %q has driver redis, but its configuration was not read (%s): it is read through the app's php, or from config files Go can evaluate", name, OrString(info.Why, "no app folder"))
	}
	mode := opts.Horizon
	if mode == "" {
		// Commands without --horizon (push, retry) read the variable.
		mode = os.Getenv("LARAWORKER_HORIZON")
	}
	horizon, err := redis.ParseHorizonRecords(mode)
	if err != nil {
		return nil, err
	}
	// The database side: failed_jobs, job_batches, the hooks queue and
	// laraworker's own tables, under the redis connection's name.
	dbCfg := cfg
	dbCfg.ConnectionName = name
	db, err := database.Open(ctx, dbCfg, database.Options{ExactStatements: opts.Exact, HooksQueue: opts.Hooks.dbqueue(), LaravelVersion: info.Version})
	if err != nil {
		return nil, err
	}
	st, err := redis.Open(ctx, redis.App{
		Connection: name, Queue: r.Queue, Redis: map[string]any(r.Redis), CacheStore: r.CacheStore,
		CacheStoreName: cfg.CacheStore, CachePrefix: cfg.CachePrefix,
		Version: info.Version, Horizon: r.Horizon, HorizonConfig: r.HorizonConfig,
	}, redis.OpenOptions{Repository: db, Logger: opts.Log, Horizon: horizon})
	if err != nil {
		db.Close()
		return nil, err
	}
	if h := st.Horizon(); h != nil {
		hc := h.Config()
		opts.Log.Info().Str("prefix", hc.Prefix).Str("redis_connection", hc.Use).
			Msg("writing Laravel Horizon's records of the jobs this worker runs (--horizon): status, completed and failed lists, metrics and tags, as Horizon's listeners do after a PHP worker")
	}
	conn := newConnection(cfg, st, opts)
	conn.Horizon = st.Horizon()
	qcfg := db.Config()
	conn.sql = &QueueDatabase{
		DB: db.DB(), Dialect: db.Dialect(), Fleet: fleet.On(db.DB(), db.Dialect(), qcfg.TablePrefix),
		// No jobs table: the dashboard reads the pending jobs in Redis
		// (Connection.Redis), failed_jobs and the fleet in the database.
		FailedTable: qcfg.FailedTable, Location: qcfg.Location(), RetryAfter: st.RetryAfter(),
	}
	conn.Redis = st.Queue()
	conn.Ping = st.Ping
	conn.close = func() error { return errors.Join(st.Close(), db.Close()) }
	conn.claimPlan = func(context.Context, zerolog.Logger) (string, string) { return "", "redis" }
	return conn, nil
}

// CheckHorizonFlag checks work's --horizon value.
func CheckHorizonFlag(v string) error {
	_, err := redis.ParseHorizonRecords(v)
	return err
}
