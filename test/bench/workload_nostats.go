package bench

import (
	"context"
	"fmt"

	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// noStats drains jobs from a freshly created table the planner has no
// statistics for (as on a server with autovacuum off, or before its first
// autoanalyze), against the same drain after ANALYZE. PostgreSQL and
// SQLite plan from statistics gathered only by ANALYZE; InnoDB samples its
// own, so the workload does not apply to MariaDB/MySQL.
func (b *runner) noStats(rep *report, ct contender) error {
	n := b.c.Int("jobs")
	w := &workloadResult{Workload: wlNoStats, Contender: ct.name,
		Setup:    fmt.Sprintf("%d jobs in a freshly created table never analysed", n),
		Baseline: fmt.Sprintf("the same %d jobs in a fresh table after ANALYZE", n)}
	for range b.c.Int("rounds") {
		load, err := b.freshTableDrain(ct, n, false)
		if err != nil {
			return fmt.Errorf("without statistics: %w", err)
		}
		base, err := b.freshTableDrain(ct, n, true)
		if err != nil {
			return fmt.Errorf("after ANALYZE: %w", err)
		}
		w.add(load, base)
		b.progressRound(w)
	}
	rep.Workloads = append(rep.Workloads, w)
	return nil
}

// freshTableDrain recreates the tables, pushes n jobs, analyses the jobs
// table or not, checks the planner's statistics are as wanted, and drains.
func (b *runner) freshTableDrain(ct contender, n int, analyzed bool) (drainMeasure, error) {
	ctx := b.c.Context
	if err := recreateWithoutStats(ctx, b.q); err != nil {
		return drainMeasure{}, err
	}
	base, err := b.emptyRun(ct)
	if err != nil {
		return drainMeasure{}, err
	}
	if err := pushTemplate(ctx, b.q, b.jobs, n); err != nil {
		return drainMeasure{}, err
	}
	if analyzed {
		if err := b.analyze(); err != nil {
			return drainMeasure{}, err
		}
	}
	has, err := hasStatistics(ctx, b.q)
	switch {
	case err != nil:
		return drainMeasure{}, err
	case has != analyzed:
		return drainMeasure{}, fmt.Errorf("the jobs table has statistics: %v, want %v", has, analyzed)
	}
	return b.drainPushed(ct, n, base, 0, b.c.Duration("drain-time"))
}

// recreateWithoutStats drops and creates the tables; on PostgreSQL the
// jobs table also opts out of autovacuum, so no autoanalyze can give it
// statistics during the drain whatever the server's settings.
func recreateWithoutStats(ctx context.Context, q *database.Queue) error {
	if err := q.DropTables(ctx); err != nil {
		return err
	}
	if err := q.CreateTables(ctx); err != nil {
		return err
	}
	if q.Config().Driver != appconfig.EnginePgSQL {
		return nil // SQLite's sqlite_stat1 rows went with the dropped table
	}
	_, err := q.DB().ExecContext(ctx, "alter table "+q.Dialect().Quote(q.Config().JobsTable)+" set (autovacuum_enabled = false)")
	return err
}

// hasStatistics says whether the planner has column statistics for the
// jobs table: pg_stats on PostgreSQL, sqlite_stat1 on SQLite.
func hasStatistics(ctx context.Context, q *database.Queue) (bool, error) {
	table := q.Config().JobsTable
	var n int
	var err error
	switch q.Config().Driver {
	case appconfig.EnginePgSQL:
		err = q.DB().QueryRowContext(ctx, "select count(*) from pg_stats where schemaname = current_schema() and tablename = $1", table).Scan(&n)
	case appconfig.EngineSQLite:
		var exists int
		if err = q.DB().QueryRowContext(ctx, "select count(*) from sqlite_master where name = 'sqlite_stat1'").Scan(&exists); err != nil || exists == 0 {
			return false, err
		}
		err = q.DB().QueryRowContext(ctx, "select count(*) from sqlite_stat1 where tbl = ?", table).Scan(&n)
	default:
		return false, fmt.Errorf("no statistics check for %s", q.Config().Driver)
	}
	return n > 0, err
}
