package queueconn

import (
	"context"
	"errors"
	"time"

	"github.com/laraworker/laraworker/internal/cache/redisshared"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/rs/zerolog"
)

// appDatabase is the app's database queue with what the app keeps in
// Redis for its workers (sharedRedis): the database store itself, or the
// jobqueue.Repository of a store whose jobs live elsewhere (SQS,
// beanstalkd: failed jobs, batches, the hooks queue, the cache stores and
// laraworker's own tables, under that connection's name in cfg).
type appDatabase struct {
	db        *database.Queue
	shared    *redisshared.Stores
	sharedErr error
}

func openAppDatabase(ctx context.Context, cfg appconfig.Config, info appconfig.AppInfo, opts Options) (*appDatabase, error) {
	shared, sharedErr := sharedRedis(cfg, info, opts.Log)
	db, err := database.Open(ctx, cfg, database.Options{ExactStatements: opts.Exact, HooksQueue: opts.Hooks.dbqueue(), LaravelVersion: info.Version, Shared: database.SharedStores{
		Cache: shared.Cache, Locks: shared.Locks, StateStores: shared.StateStores, DurationLimiters: shared.DurationLimiters,
	}})
	if err != nil {
		shared.Close()
		return nil, err
	}
	return &appDatabase{db: db, shared: shared, sharedErr: sharedErr}, nil
}

// Close closes the database and the Redis clients.
func (a *appDatabase) Close() error { return errors.Join(a.db.Close(), a.shared.Close()) }

// repositoryStore is a store that keeps its failed jobs and batches in an
// appDatabase.
type repositoryStore interface {
	jobqueue.Store
	RetryAfter() time.Duration
	Ping(ctx context.Context) error
	Close() error
}

// repositoryConnection is the connection of st, whose jobs live outside
// the database (no jobs table: the dashboard reads failed_jobs and the
// fleet), claimed as driver names it.
func (a *appDatabase) repositoryConnection(cfg appconfig.Config, st repositoryStore, opts Options, driver string) *Connection {
	conn := newConnection(cfg, st, opts)
	conn.SharedRedisErr = a.sharedErr
	qcfg := a.db.Config()
	conn.sql = &QueueDatabase{
		DB: a.db.DB(), Dialect: a.db.Dialect(), Fleet: fleet.On(a.db.DB(), a.db.Dialect(), qcfg.TablePrefix),
		FailedTable: qcfg.FailedTable, Location: qcfg.Location(), RetryAfter: st.RetryAfter(),
	}
	conn.Ping = st.Ping
	conn.close = func() error { return errors.Join(st.Close(), a.Close()) }
	conn.claimPlan = func(context.Context, zerolog.Logger) (string, string) { return "", driver }
	return conn
}
