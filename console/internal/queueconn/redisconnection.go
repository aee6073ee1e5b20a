package queueconn

import (
	"context"
	"fmt"
	"os"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/dashboard/redisjobs"
	"github.com/laraworker/laraworker/dashboard/snapshot"
	"github.com/laraworker/laraworker/dbqueue"
	"github.com/laraworker/laraworker/fleet"
	"github.com/laraworker/laraworker/redisstore"
	"github.com/rs/zerolog"
)

// This file is the redis driver's constructor: the one place of the CLI
// that names package redisstore (and the dashboard's Redis source).

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
	horizon, err := redisstore.ParseHorizonRecords(mode)
	if err != nil {
		return nil, err
	}
	st, err := redisstore.Open(ctx, redisstore.App{
		Connection: name, Queue: r.Queue, Redis: map[string]any(r.Redis), CacheStore: r.CacheStore,
		Version: info.Version, Horizon: r.Horizon, HorizonConfig: r.HorizonConfig, DB: cfg,
	}, redisstore.OpenOptions{DB: dbqueue.Options{ExactStatements: opts.Exact, HooksQueue: opts.Hooks.dbqueue()}, Logger: opts.Log, Horizon: horizon})
	if err != nil {
		return nil, err
	}
	if h := st.Horizon(); h != nil {
		hc := h.Config()
		opts.Log.Info().Str("prefix", hc.Prefix).Str("redis_connection", hc.Use).
			Msg("writing Laravel Horizon's records of the jobs this worker runs (--horizon): status, completed and failed lists, metrics and tags, as Horizon's listeners do after a PHP worker")
	}
	conn := newConnection(cfg, st, opts)
	db := st.Database()
	qcfg := db.Config()
	conn.sql = &QueueDatabase{
		DB:    db.DB(),
		Fleet: fleet.On(db.DB(), db.Dialect(), qcfg.TablePrefix),
		// No jobs table: the dashboard reads the pending jobs in Redis
		// (the connection's default queue always watched), failed_jobs and
		// the fleet in the database.
		Tables: snapshot.Tables{DB: db.DB(), Dialect: db.Dialect(), Failed: qcfg.FailedTable,
			Location: qcfg.Location(), RetryAfter: st.RetryAfter()},
		Jobs: redisjobs.New(st.Queue(), redisjobs.Options{Queues: []string{st.Queue().Config().Queue}}),
	}
	conn.Ping = st.Ping
	conn.close = st.Close
	conn.claimPlan = func(context.Context, zerolog.Logger) (string, string) { return "", "redis" }
	return conn, nil
}

// CheckHorizonFlag checks work's --horizon value.
func CheckHorizonFlag(v string) error {
	_, err := redisstore.ParseHorizonRecords(v)
	return err
}
