package sqldb

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// sortOffWithoutStatistics turns sorting off for the session when
// PostgreSQL has no statistics for the jobs table's queue column (never
// analysed, or analysed while empty; autovacuum may be off). Without
// them it estimates `queue = ?` at 0.5% of the rows whatever the queue
// holds, so Laravel's claim (`... order by id limit n`) looks cheaper as
// a bitmap scan of the queue index and a sort than as the primary key
// read in order, and every claim then reads and sorts every row of the
// queue: a tenth of the primary-key plan's rate at 16 workers on a
// 20,000-job backlog. With sorting off the claim reads the primary key in
// order and stops after n rows; statements that can only be answered
// with a sort still sort. The setting is decided when the connection
// opens: once the table has statistics, new connections leave the choice
// to the planner, which then weighs a small queue beside a large one (a
// priority queue that is empty, say) against the primary-key plan.
// Only this pool's own sessions: the table is never analysed and no
// server setting changes. A failed check (a server without pg_stats or
// enable_sort) leaves the session as it is. Behind a pooler in
// transaction mode (PgBouncer's pool_mode=transaction) a session setting
// stays on the server connection it ran on, which other clients then
// share, as any SET there does.
const sortOffWithoutStatistics = `select set_config('enable_sort', 'off', false) where not exists (` +
	`select from pg_stats s join pg_class c on c.relname = s.tablename join pg_namespace n on n.oid = c.relnamespace ` +
	`and n.nspname = s.schemaname where c.oid = to_regclass($1) and s.attname = 'queue')`

// pgSession is the pool's after-connect hook: the claim's plan for the
// jobs table, and the bound on a session idle in a transaction.
func pgSession(jobsTable string, abandonedTx time.Duration) func(context.Context, *pgx.Conn) error {
	plan := claimPlanWithoutStatistics(jobsTable)
	return func(ctx context.Context, c *pgx.Conn) error {
		if err := pgAbandonedTxTimeout(ctx, c, abandonedTx); err != nil {
			return err
		}
		return plan(ctx, c)
	}
}

// claimPlanWithoutStatistics is the after-connect check of the claim's
// plan for the jobs table.
func claimPlanWithoutStatistics(jobsTable string) func(context.Context, *pgx.Conn) error {
	name := pgsqlDialect{}.Quote(jobsTable)
	return func(ctx context.Context, c *pgx.Conn) error {
		rows, err := c.Query(ctx, sortOffWithoutStatistics, name)
		if err == nil {
			rows.Close()
		}
		return nil
	}
}
