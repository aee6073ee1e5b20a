package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// Statements per job, counted by the server over one drain: what the
// drain asked of the database, worker or raw loop alike, whatever either
// says of itself. MariaDB/MySQL: the global Questions (every statement a
// client sent, each statement of a multi-statement packet counted) and
// the Com_* counters of the claim's and delete's statements; the server
// is shared, so other clients' statements count too (run it on a quiet
// server). PostgreSQL: the transactions committed and rolled back in the
// bench's database (pg_stat_database, the bench's database alone), which
// for autocommitted statements is one per statement.
//
// PostgreSQL publishes a backend's counts at most once a second, and an
// idle backend's last ones only ten seconds later; a backend that exits
// publishes them as it goes. The worker's backends exit with it; the
// bench's own pool (the raw loops, the pushes) is made to publish before
// each reading (pg_stat_force_next_flush on every connection it holds).

// stmtCounters are the server's counters at one moment.
type stmtCounters map[string]int64

// stmtMeter reads the counters before a drain.
type stmtMeter struct {
	b     *runner
	start stmtCounters
}

func (b *runner) startStmtMeter(ctx context.Context) stmtMeter {
	start, _ := b.readStmtCounters(ctx)
	return stmtMeter{b: b, start: start}
}

// per1k is each counter's change per 1,000 jobs since the start (nil when
// not counted: SQLite, or a counter that could not be read).
func (m stmtMeter) per1k(ctx context.Context, jobs int) map[string]float64 {
	if m.start == nil || jobs <= 0 {
		return nil
	}
	end, err := m.b.readStmtCounters(ctx)
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for k, v := range end {
		d := v - m.start[k]
		if k == "Questions" {
			d-- // the reading's own SHOW
		}
		out[k] = float64(d) / float64(jobs) * 1000
	}
	return out
}

// mysqlStmtCounters are the claim's and the delete's statements and the
// transactions around them.
var mysqlStmtCounters = []string{"Questions", "Com_select", "Com_update", "Com_delete", "Com_begin", "Com_commit", "Com_rollback"}

func (b *runner) readStmtCounters(ctx context.Context) (stmtCounters, error) {
	db := b.q.DB()
	switch b.cfg.Driver {
	case appconfig.EngineSQLite:
		return nil, fmt.Errorf("no server")
	case appconfig.EnginePgSQL:
		if err := b.publishPgStats(ctx); err != nil {
			return nil, err
		}
		return b.readPgXacts(ctx)
	}
	rows, err := db.QueryContext(ctx, "show global status where Variable_name in ('"+strings.Join(mysqlStmtCounters, "','")+"')")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := stmtCounters{}
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, rows.Err()
}

// readPgXacts reads the database's transaction counts once they stop
// moving: the backends of a worker that just exited publish theirs as
// they go, a few milliseconds after the worker is gone.
func (b *runner) readPgXacts(ctx context.Context) (stmtCounters, error) {
	var prev int64 = -1
	for range 20 {
		var v int64
		if err := b.q.DB().QueryRowContext(ctx,
			"select xact_commit + xact_rollback from pg_stat_database where datname = current_database()").Scan(&v); err != nil {
			return nil, err
		}
		if v == prev {
			return stmtCounters{"xacts": v}, nil
		}
		prev = v
		time.Sleep(150 * time.Millisecond)
	}
	return stmtCounters{"xacts": prev}, nil
}

// publishPgStats makes every connection of the bench's own pool publish
// its pending counts: held all at once, so each is a different backend.
func (b *runner) publishPgStats(ctx context.Context) error {
	db := b.q.DB()
	n := db.Stats().OpenConnections
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range n {
		c, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		// The flush happens when the backend is idle again, after this
		// statement.
		if _, err := c.ExecContext(ctx, "select pg_stat_force_next_flush()"); err != nil {
			return err
		}
	}
	return nil
}
