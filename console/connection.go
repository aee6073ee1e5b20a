package console

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

// connection is one queue connection as the commands use it. They reach
// the store only through it, by the jobqueue contract: the Store the
// worker runs on, the admin side, and the capabilities only some stores
// have (nil when the store lacks them). openConnection picks the store by
// the driver of the queue connection served; each driver's constructor
// (dbconnection.go for "database") is the one place that names its
// package.
type connection struct {
	cfg appconfig.Config
	// name and driver are the queue connection served and its driver, for
	// messages.
	name, driver string
	// exact is --laravel-exact, set once when the connection opens: the
	// store runs Laravel's own statements, and the worker's config and the
	// claim reported at start take it from here.
	exact bool

	store  jobqueue.Store
	admin  jobqueue.Admin
	failed jobqueue.FailedJobs
	// schema checks and creates the queue's tables; classes samples the
	// classes waiting on a queue.
	schema  jobqueue.Schema
	classes jobqueue.ClassSampler
	// jobs reads one queued job (inspect --id, --uuid); batches lists and
	// cancels batches (the dashboard).
	jobs    jobqueue.JobFinder
	batches jobqueue.BatchAdmin
	// sql is the SQL database the queue lives in, for what reads or writes
	// it beside the store: laraworker's own tables (the fleet), the
	// dashboard's reads, handlers' App.DB.
	sql *queueDatabase

	// ping tells whether the store is reachable (/healthz).
	ping  func(ctx context.Context) error
	close func() error
	// claimPlan, for a store that chooses its claim at start (the database
	// queue's claim index), says which claim the worker runs and the
	// store's lock clause, and warns about what slows claims.
	claimPlan func(ctx context.Context, log zerolog.Logger) (lock, claim string)
}

// queueDatabase is the SQL database a queue lives in.
type queueDatabase struct {
	db *sql.DB
	// fleet is laraworker's own tables there (workers, pauses, history).
	fleet *fleet.Store
	// tables are the queue's tables as the dashboard reads them:
	// failed_jobs, and the jobs table of a database queue.
	tables snapshot.Tables
	// jobs reads the pending jobs of a queue that has no jobs table (a
	// Redis queue); nil: the dashboard reads tables.Jobs.
	jobs snapshot.JobSource
}

// connectionOptions are how a command opens its connection.
type connectionOptions struct {
	// exact is --laravel-exact (see connection.exact).
	exact bool
	// log receives what the store itself reports (the Redis store: jobs
	// it leaves at the head of a queue).
	log zerolog.Logger
	// hooks is where the store pushes the bridge's hook jobs (work with
	// the bridge); nil: nowhere.
	hooks *hooksQueue
	// horizon is work's --horizon: whether a redis connection's store
	// writes Horizon's records ("" is auto).
	horizon string
}

// Drivers of Laravel queue connections (config/queue.php).
const (
	driverDatabase = "database"
	driverRedis    = "redis"
)

// openConnection opens the queue connection the configuration serves, with
// the store of its driver.
func openConnection(ctx context.Context, cfg appconfig.Config, info appconfig.AppInfo, opts connectionOptions) (*connection, error) {
	name, driver := servedConnection(cfg, info)
	var conn *connection
	var err error
	switch driver {
	case driverRedis:
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
	conn.name, conn.driver = name, driver
	if conn.admin == nil || conn.failed == nil {
		conn.Close()
		return nil, fmt.Errorf("queue connection %q: the %s store lacks the admin operations or the failed jobs", name, driver)
	}
	return conn, nil
}

// servedConnection is the queue connection served and its driver, as the
// app's configuration says; a driver it does not say is "database" (no
// app, or an app read without its config/queue.php).
func servedConnection(cfg appconfig.Config, info appconfig.AppInfo) (name, driver string) {
	name = orString(info.Connection, cfg.ConnectionName)
	driver = info.QueueDriver
	if d, ok := info.QueueConnections[name]; ok && driver == "" {
		driver = d
	}
	if driver == "" || driver == "?" {
		driver = driverDatabase
	}
	return name, driver
}

// newConnection is a connection on store, with the capabilities store has.
func newConnection(cfg appconfig.Config, store jobqueue.Store, opts connectionOptions) *connection {
	c := &connection{cfg: cfg, store: store, exact: opts.exact}
	c.admin, _ = store.(jobqueue.Admin)
	c.failed, _ = store.(jobqueue.FailedJobs)
	c.schema, _ = store.(jobqueue.Schema)
	c.classes, _ = store.(jobqueue.ClassSampler)
	c.jobs, _ = store.(jobqueue.JobFinder)
	c.batches, _ = store.(jobqueue.BatchAdmin)
	return c
}

// Close closes the store.
func (c *connection) Close() {
	if c.close != nil {
		_ = c.close()
	}
}

// db is the queue's SQL database for handlers (handlers.App.DB); nil for a
// store that has none.
func (c *connection) db() *sql.DB {
	if c.sql == nil {
		return nil
	}
	return c.sql.db
}

// createTables creates the queue's tables (work --create-tables, tables).
func (c *connection) createTables(ctx context.Context) error {
	if c.schema == nil {
		return c.lacks("tables to create")
	}
	return c.schema.CreateTables(ctx)
}

// database is the queue's SQL database, or an error naming what needs it.
func (c *connection) database(what string) (*queueDatabase, error) {
	if c.sql == nil {
		return nil, c.lacks("SQL database for " + what)
	}
	return c.sql, nil
}

func (c *connection) lacks(what string) error {
	return fmt.Errorf("queue connection %q (driver %s) has no %s", c.name, c.driver, what)
}

// claim reports the claim the worker runs, for the "worker started" line.
func (c *connection) claim(ctx context.Context, log zerolog.Logger) (lock, claim string) {
	if c.claimPlan == nil {
		return "", ""
	}
	return c.claimPlan(ctx, log)
}

// classReader tells which classes wait on queues: a sample, then exact
// counts. nil when the store cannot sample.
func (c *connection) classReader() classReader {
	if c.classes == nil {
		return nil
	}
	return sampledAdmin{c.classes, c.admin}
}

// classReader is ClassSampler's sample with Admin's exact counts.
type classReader interface {
	jobqueue.ClassSampler
	CountClasses(ctx context.Context, queue string, classes []string) ([]jobqueue.ClassCount, error)
}

type sampledAdmin struct {
	jobqueue.ClassSampler
	jobqueue.Admin
}

// sortedClasses lists a ClassesOnQueues result, most jobs first.
func sortedClasses(m map[string]int64) []string {
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

// classSample is how many jobs the startup checks and move read to tell
// which classes wait on a queue.
const classSample = 5000
