package database

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/cache/dbcache"
	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database/internal/sqlstmt"
)

// Options are Open's settings beyond the app's connection config. The
// zero value is the default for every field, as in worker.Config.
type Options struct {
	// DB, when set, is used instead of opening a connection pool from the
	// config (which still gives the driver, tables and queue settings).
	// Close then leaves it open: it belongs to the caller.
	DB *sql.DB
	// Clock replaces time.Now (tests).
	Clock func() time.Time
	// Retry bounds the re-run of transactions that failed with a
	// retryable error; zero means sqldb.DefaultRetryPolicy. MaxAttempts
	// below 1 counts as 1.
	Retry sqldb.RetryPolicy
	// LaravelVersion is the app's Laravel version: CreateTables makes the
	// tables its migration stubs make (13.6+: jobs.attempts smallint;
	// 13.9+: failed_jobs' connection and queue varchar(255) with an index).
	// "": the 8.x-12.x shapes.
	LaravelVersion string
	// ExactStatements makes Delete run Laravel's own deleteReserved
	// transaction for each job (`--laravel-exact`), instead of one grouped
	// delete, and Release, Fail and Finish lock the row with Laravel's
	// statement before they delete it.
	ExactStatements bool
	// SQLiteBusyTimeout is SQLite's busy_timeout; zero means 5s.
	SQLiteBusyTimeout time.Duration
	// HooksQueue is where the bridge's hook jobs of outcomes go
	// (jobqueue.Followup.Hooks). Nil: a Followup with hooks is refused.
	HooksQueue *HooksQueue
	// Shared are the app's cache stores Go reaches beyond the database's,
	// as package redisshared opens them for an app whose default cache
	// store is redis: the Queue's SharedCache, LockStores, StateStores and
	// DurationLimiters then include them, so that the queue:restart
	// signal, maxExceptions, unique locks and job middleware state are the
	// ones PHP's workers use. The zero value: the database store alone.
	Shared SharedStores
}

// SharedStores are cache stores and limiters in addition to the database
// store's (the fields of redisshared.Stores). The Queue neither dials nor
// closes them.
type SharedStores struct {
	// Cache is the app's default cache store when it is not the database
	// store: the queue:restart signal and the maxExceptions counters.
	// Nil: the database store's, when it is the default.
	Cache jobqueue.Cache
	// Locks are lock stores by config/cache.php store name ("redis").
	Locks map[string]jobqueue.LockStore
	// StateStores are cache stores by config/cache.php name and
	// DurationLimiters Redis connections' limiters by config/database.php
	// name: where job middleware keep their state.
	StateStores      map[string]jobqueue.StateStore
	DurationLimiters map[string]jobqueue.DurationLimiter
}

// HooksQueue is a queue of a Laravel database queue connection on the
// queue's own database (its database connection), where the bridge's
// hook jobs are pushed in the transactions of the outcomes they follow
// (bridge/PROTOCOL.md, "hooks_queue"). Another database cannot join
// those transactions: the caller checks that it is the same one.
type HooksQueue struct {
	// Connection is the queue connection's name (config/queue.php), for
	// messages.
	Connection string
	// Table is its jobs table, behind the table prefix; "" is the
	// queue's own jobs table.
	Table string
	// Queue is the queue's name.
	Queue string
}

// Open connects to the database described by cfg, detects the server
// version and returns a Queue. The fields cfg leaves unset take Laravel's
// defaults (appconfig.Config.WithDefaults): Config{Driver: "sqlite",
// Database: path} is Laravel's tables in that file. Errors never contain
// the password or DSN.
func Open(ctx context.Context, cfg appconfig.Config, opts Options) (*Queue, error) {
	cfg = cfg.WithDefaults()
	conn, err := sqldb.Open(ctx, cfg, sqldb.Options{DB: opts.DB, Clock: opts.Clock, Retry: opts.Retry, SQLiteBusyTimeout: opts.SQLiteBusyTimeout,
		Setup: sqldb.SetupErrors{MissingTable: jobqueue.ErrMissingTable, PermissionDenied: jobqueue.ErrPermissionDenied}})
	if err != nil {
		return nil, err
	}
	q := newQueue(conn, cfg, opts.ExactStatements)
	q.st.T.Shape = sqldb.ShapeFor(opts.LaravelVersion)
	q.shared = opts.Shared
	if err := q.setHooksQueue(opts.HooksQueue); err != nil {
		conn.Close()
		return nil, err
	}
	return q, nil
}

// newQueue builds the queue's statements for the server conn reached.
func newQueue(conn *sqldb.DB, cfg appconfig.Config, exact bool) *Queue {
	d := conn.Dialect
	q := &Queue{conn: conn, db: conn.Pool, d: d, cfg: cfg, retryAfter: int64(cfg.RetryAfterSeconds()), loc: cfg.Location(), exact: exact,
		defaultQueues: []string{cfg.DefaultQueue}, scan: scanBounds{slow: slowClaim}}
	engine := d.Name()
	q.deleteReturning = engine != appconfig.EngineMySQL || strings.Contains(conn.ServerVersion, "MariaDB")
	q.lock = sqldb.LockForPopping(engine, conn.ServerVersion, cfg.ServerVersion)
	q.st = sqlstmt.New(d, sqldb.Tables{Jobs: cfg.JobsTable, Failed: cfg.FailedTable, Batches: cfg.BatchesTable}, q.lock)
	q.oneStatementClaims = q.st.OneStatementClaims()
	q.pgArrays = q.st.PgArrays()
	q.deleteOneText = q.st.DeleteReservedJob()
	q.singleStatementSafe = conn.SingleStatementSafe()
	q.locks = dbcache.NewLocks(conn, cfg.CacheLockTable, cfg.CachePrefix)
	if cfg.CacheStore == "database" {
		q.cache = dbcache.New(conn, cfg.CacheTable, cfg.CachePrefix)
	}
	return q
}
