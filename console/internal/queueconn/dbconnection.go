package queueconn

import (
	"context"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/dashboard/snapshot"
	"github.com/laraworker/laraworker/dbqueue"
	"github.com/laraworker/laraworker/fleet"
	"github.com/rs/zerolog"
)

// This file is the database driver's constructor: the one place of the
// CLI that names package dbqueue. Everything else reaches the store through
// the connection's jobqueue interfaces.

// openDatabaseConnection opens Laravel's database queue on cfg's database,
// with laraworker's own tables there.
func openDatabaseConnection(ctx context.Context, cfg appconfig.Config, opts Options) (*Connection, error) {
	q, err := dbqueue.Open(ctx, cfg, dbqueue.Options{ExactStatements: opts.Exact, HooksQueue: opts.Hooks.dbqueue()})
	if err != nil {
		return nil, err
	}
	conn := newConnection(cfg, q, opts)
	qcfg := q.Config()
	conn.sql = &QueueDatabase{
		DB:    q.DB(),
		Fleet: fleet.On(q.DB(), q.Dialect(), qcfg.TablePrefix),
		Tables: snapshot.Tables{DB: q.DB(), Dialect: q.Dialect(), Jobs: qcfg.JobsTable, Failed: qcfg.FailedTable,
			Location: qcfg.Location(), RetryAfter: q.RetryAfter()},
	}
	conn.Ping = q.DB().PingContext
	conn.close = q.Close
	conn.claimPlan = func(ctx context.Context, log zerolog.Logger) (string, string) {
		return q.LockClause(), detectClaimPath(ctx, q, opts.Exact, log)
	}
	return conn, nil
}

// detectClaimPath finds out whether the claim index is there (the worker
// then claims through it) and says which claim the worker runs. On
// PostgreSQL without the index and without statistics it warns once:
// Laravel's claim query may then plan as a bitmap scan and a full sort.
// The worker never runs ANALYZE on the user's table itself.
func detectClaimPath(ctx context.Context, q *dbqueue.Queue, exact bool, log zerolog.Logger) string {
	info, err := q.DetectClaimPath(ctx)
	if err != nil {
		log.Warn().Err(err).Msg("could not look for the claim index; claiming with Laravel's query")
		return string(dbqueue.ClaimPathLaravel)
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
			Msg("PostgreSQL has no statistics for the jobs table: claims may be slow (a full sort each). Run `laraworker tables --index` (plans that do not depend on statistics) or ANALYZE the table")
	}
	return string(info.Path)
}

// dbqueue is the hooks queue as package dbqueue takes it.
func (h *HooksQueue) dbqueue() *dbqueue.HooksQueue {
	if h == nil {
		return nil
	}
	return &dbqueue.HooksQueue{Connection: h.Connection, Table: h.Table, Queue: h.Queue}
}
