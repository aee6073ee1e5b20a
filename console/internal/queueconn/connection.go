package queueconn

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/horizon"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/rs/zerolog"
)

// Connection is one queue connection as the commands use it. They reach
// the store only through it, by the jobqueue contract (Store: the worker's
// side, the admin side, the failed jobs, batches and tables). Open picks
// the store by the driver of the queue connection served; each driver's
// constructor (dbconnection.go for "database", redisconnection.go,
// beanstalkdconnection.go, sqsconnection.go) is the one place that names
// its package.
type Connection struct {
	Cfg appconfig.Config
	// Name and Driver are the queue connection served and its driver, for
	// messages.
	Name, Driver string
	// Exact is --laravel-exact, set once when the connection opens: the
	// store runs Laravel's own statements, and the worker's config and the
	// claim reported at start take it from here.
	Exact bool

	Store jobqueue.Store
	// sql is the SQL database the queue lives in, for what reads or writes
	// it beside the store: laraworker's own tables (the fleet), the
	// dashboard's reads, handlers' App.DB.
	sql *QueueDatabase

	// Redis is the Redis queue of a redis connection, for what reads its
	// jobs beside the store (the dashboard, the long-wait monitor); nil
	// for a database connection, whose jobs are in QueueDatabase.JobsTable.
	Redis *redisproto.Queue

	// Horizon writes Laravel Horizon's records on a redis connection
	// whose store writes them (--horizon): `work` lists the worker in
	// Horizon's masters and supervisors through it. Nil otherwise.
	Horizon *horizon.Recorder

	// SharedRedisErr is why a database queue's app Redis (its redis cache
	// store, the ...WithRedis middleware's connections) could not be
	// opened, nil when it was or there is none: the commands warn and go
	// on without it; `work` stops on a *redisproto.ConfigError.
	SharedRedisErr error

	// Ping tells whether the store is reachable (/healthz).
	Ping  func(ctx context.Context) error
	close func() error
	// claimPlan, for a store that chooses its claim at start (the database
	// queue's claim index), says which claim the worker runs and the
	// store's lock clause, and warns about what slows claims.
	claimPlan func(ctx context.Context, log zerolog.Logger) (lock, claim string)
}

// QueueDatabase is the SQL database a queue lives in, or keeps its
// failed jobs in (a Redis queue's): for what reads or writes it beside
// the store (laraworker's own tables, the dashboard's and the long-wait
// monitor's reads, handlers' App.DB).
type QueueDatabase struct {
	DB *sql.DB
	// Dialect is the database engine's SQL.
	Dialect sqldb.Dialect
	// Fleet is laraworker's own tables there (workers, pauses, history).
	Fleet *fleet.Store
	// JobsTable and FailedTable are Laravel's jobs and failed_jobs tables
	// (with the connection's table prefix); JobsTable is "" for a queue
	// whose jobs are elsewhere (Connection.Redis). Location is the app's
	// timezone, which failed_at is written in.
	JobsTable, FailedTable string
	Location               *time.Location
	// RetryAfter is the queue connection's retry_after.
	RetryAfter time.Duration
}

// Options are how a command opens its connection.
type Options struct {
	// Exact is --laravel-exact (see Connection.Exact).
	Exact bool
	// Log receives what the store itself reports (the Redis store: jobs
	// it leaves at the head of a queue).
	Log zerolog.Logger
	// Hooks is where the store pushes the bridge's hook jobs (work with
	// the bridge); nil: nowhere.
	Hooks *HooksQueue
	// Horizon is work's --horizon: whether a redis connection's store
	// writes Horizon's records ("" is auto).
	Horizon string
	// NoLongPoll: an empty claim returns at once (an SQS store otherwise
	// waits on the queue for a job): --once, --stop-when-empty and
	// --laravel-exact stop or sleep as artisan does.
	NoLongPoll bool
}

// HooksQueue is where the worker's store pushes the bridge's hook jobs:
// a queue of a database queue connection on the store's own database.
type HooksQueue struct {
	Connection, Table, Queue string
}

// Drivers of Laravel queue connections (config/queue.php).
const (
	DriverDatabase   = "database"
	DriverRedis      = "redis"
	DriverBeanstalkd = "beanstalkd"
	DriverSQS        = "sqs"
)

// Served reports whether laraworker serves queue connections of driver:
// database, redis, beanstalkd and sqs.
func Served(driver string) bool {
	return driver == DriverDatabase || driver == DriverRedis || driver == DriverBeanstalkd || driver == DriverSQS
}

// Open opens the queue connection the configuration serves, with the
// store of its driver.
func Open(ctx context.Context, cfg appconfig.Config, info appconfig.AppInfo, opts Options) (*Connection, error) {
	name, driver := servedConnection(cfg, info)
	var conn *Connection
	var err error
	switch driver {
	case DriverRedis:
		conn, err = openRedisConnection(ctx, name, cfg, info, opts)
	case DriverBeanstalkd:
		conn, err = openBeanstalkdConnection(ctx, name, cfg, info, opts)
	case DriverSQS:
		conn, err = openSQSConnection(ctx, name, cfg, info, opts)
	default:
		// database, and the drivers no Go store serves (sync, null...):
		// logAppConfig has warned that PHP does not push to the tables,
		// which are served as before.
		conn, err = openDatabaseConnection(ctx, cfg, info, opts)
	}
	if err != nil {
		return nil, err
	}
	conn.Name, conn.Driver = name, driver
	return conn, nil
}

// servedConnection is the queue connection served and its driver, as the
// app's configuration says; a driver it does not say is "database" (no
// app, or an app read without its config/queue.php).
func servedConnection(cfg appconfig.Config, info appconfig.AppInfo) (name, driver string) {
	name = OrString(info.Connection, cfg.ConnectionName)
	driver = info.QueueDriver
	if d, ok := info.QueueConnections[name]; ok && driver == "" {
		driver = d
	}
	if driver == "" || driver == "?" {
		driver = DriverDatabase
	}
	return name, driver
}

// newConnection is a connection on store.
func newConnection(cfg appconfig.Config, store jobqueue.Store, opts Options) *Connection {
	return &Connection{Cfg: cfg, Store: store, Exact: opts.Exact}
}

// Close closes the store.
func (c *Connection) Close() {
	if c.close != nil {
		_ = c.close()
	}
}

// DB is the queue's SQL database for handlers (handlers.App.DB); nil for a
// store that has none.
func (c *Connection) DB() *sql.DB {
	if c.sql == nil {
		return nil
	}
	return c.sql.DB
}

// CreateTables creates the queue's tables (work --create-tables, tables).
func (c *Connection) CreateTables(ctx context.Context) error {
	return c.Store.CreateTables(ctx)
}

// Database is the queue's SQL database, or an error naming what needs it.
func (c *Connection) Database(what string) (*QueueDatabase, error) {
	if c.sql == nil {
		return nil, c.Lacks("SQL database for " + what)
	}
	return c.sql, nil
}

// SharedCache is the app's default cache store as the store shares it
// with PHP (the queue:restart signal, Laravel's queue pauses); nil when
// Go shares none.
func (c *Connection) SharedCache() jobqueue.Cache {
	return c.Store.SharedCache()
}

// Lacks is the error for what the connection's store does not have, or
// cannot do (its method returned jobqueue.ErrNotSupported).
func (c *Connection) Lacks(what string) error {
	return fmt.Errorf("queue connection %q (driver %s) has no %s", c.Name, c.Driver, what)
}

// Claim reports the claim the worker runs, for the "worker started" line.
func (c *Connection) Claim(ctx context.Context, log zerolog.Logger) (lock, claim string) {
	if c.claimPlan == nil {
		return "", ""
	}
	return c.claimPlan(ctx, log)
}

// SortedClasses lists a ClassesOnQueues result, most jobs first.
func SortedClasses(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if m[out[i]] != m[out[j]] {
			return m[out[i]] > m[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// ClassSample is how many jobs the startup checks and move read to tell
// which classes wait on a queue.
const ClassSample = 5000

// OrString is a, or b when a is empty.
func OrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
