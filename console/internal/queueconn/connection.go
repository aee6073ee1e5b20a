package queueconn

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/dashboard/snapshot"
	"github.com/laraworker/laraworker/fleet"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/rs/zerolog"
)

// Connection is one queue connection as the commands use it. They reach
// the store only through it, by the jobqueue contract: the Store the
// worker runs on, the admin side, and the capabilities only some stores
// have (nil when the store lacks them). Open picks the store by the
// driver of the queue connection served; each driver's constructor
// (dbconnection.go for "database") is the one place that names its
// package.
type Connection struct {
	Cfg appconfig.Config
	// Name and Driver are the queue connection served and its driver, for
	// messages.
	Name, Driver string
	// Exact is --laravel-exact, set once when the connection opens: the
	// store runs Laravel's own statements, and the worker's config and the
	// claim reported at start take it from here.
	Exact bool

	Store  jobqueue.Store
	Admin  jobqueue.Admin
	Failed jobqueue.FailedJobs
	// Schema checks and creates the queue's tables; Classes samples the
	// classes waiting on a queue.
	Schema  jobqueue.Schema
	Classes jobqueue.ClassSampler
	// Jobs reads one queued job (inspect --id, --uuid); Batches lists and
	// cancels batches (the dashboard).
	Jobs    jobqueue.JobFinder
	Batches jobqueue.BatchAdmin
	// sql is the SQL database the queue lives in, for what reads or writes
	// it beside the store: laraworker's own tables (the fleet), the
	// dashboard's reads, handlers' App.DB.
	sql *QueueDatabase

	// Ping tells whether the store is reachable (/healthz).
	Ping  func(ctx context.Context) error
	close func() error
	// claimPlan, for a store that chooses its claim at start (the database
	// queue's claim index), says which claim the worker runs and the
	// store's lock clause, and warns about what slows claims.
	claimPlan func(ctx context.Context, log zerolog.Logger) (lock, claim string)
}

// QueueDatabase is the SQL database a queue lives in.
type QueueDatabase struct {
	DB *sql.DB
	// Fleet is laraworker's own tables there (workers, pauses, history).
	Fleet *fleet.Store
	// Tables are the queue's tables as the dashboard reads them:
	// failed_jobs, and the jobs table of a database queue.
	Tables snapshot.Tables
	// Jobs reads the pending jobs of a queue that has no jobs table (a
	// Redis queue); nil: the dashboard reads Tables.Jobs.
	Jobs snapshot.JobSource
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
}

// HooksQueue is where the worker's store pushes the bridge's hook jobs:
// a queue of a database queue connection on the store's own database.
type HooksQueue struct {
	Connection, Table, Queue string
}

// Drivers of Laravel queue connections (config/queue.php).
const (
	DriverDatabase = "database"
	DriverRedis    = "redis"
)

// Open opens the queue connection the configuration serves, with the
// store of its driver.
func Open(ctx context.Context, cfg appconfig.Config, info appconfig.AppInfo, opts Options) (*Connection, error) {
	name, driver := servedConnection(cfg, info)
	var conn *Connection
	var err error
	switch driver {
	case DriverRedis:
		conn, err = openRedisConnection(ctx, name, cfg, info, opts)
	default:
		// database, and the drivers no Go store serves (sync, sqs...):
		// logAppConfig has warned that PHP does not push to the tables,
		// which are served as before.
		conn, err = openDatabaseConnection(ctx, cfg, info, opts)
	}
	if err != nil {
		return nil, err
	}
	conn.Name, conn.Driver = name, driver
	if conn.Admin == nil || conn.Failed == nil {
		conn.Close()
		return nil, fmt.Errorf("queue connection %q: the %s store lacks the admin operations or the failed jobs", name, driver)
	}
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

// newConnection is a connection on store, with the capabilities store has.
func newConnection(cfg appconfig.Config, store jobqueue.Store, opts Options) *Connection {
	c := &Connection{Cfg: cfg, Store: store, Exact: opts.Exact}
	c.Admin, _ = store.(jobqueue.Admin)
	c.Failed, _ = store.(jobqueue.FailedJobs)
	c.Schema, _ = store.(jobqueue.Schema)
	c.Classes, _ = store.(jobqueue.ClassSampler)
	c.Jobs, _ = store.(jobqueue.JobFinder)
	c.Batches, _ = store.(jobqueue.BatchAdmin)
	return c
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
	if c.Schema == nil {
		return c.Lacks("tables to create")
	}
	return c.Schema.CreateTables(ctx)
}

// Database is the queue's SQL database, or an error naming what needs it.
func (c *Connection) Database(what string) (*QueueDatabase, error) {
	if c.sql == nil {
		return nil, c.Lacks("SQL database for " + what)
	}
	return c.sql, nil
}

// Lacks is the error for a capability the connection's store does not
// have.
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

// ClassReader tells which classes wait on queues: a sample, then exact
// counts. nil when the store cannot sample.
func (c *Connection) ClassReader() ClassReader {
	if c.Classes == nil {
		return nil
	}
	return sampledAdmin{c.Classes, c.Admin}
}

// ClassReader is ClassSampler's sample with Admin's exact counts.
type ClassReader interface {
	jobqueue.ClassSampler
	CountClasses(ctx context.Context, queue string, classes []string) ([]jobqueue.ClassCount, error)
}

type sampledAdmin struct {
	jobqueue.ClassSampler
	jobqueue.Admin
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
