package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// rawDrain is the ceiling of a mode: the statements laraworker runs, in a
// loop on one connection, with nothing else (no payload parsing, no
// handler, no goroutines). "exact" is Laravel's per-job claim transaction
// then its deleteReserved transaction; "batch" claims ct.batch rows in one
// transaction and deletes them in one fenced statement, on ct.claimers
// connections at once (SKIP LOCKED keeps their claims apart).
func (b *runner) rawDrain(ctx context.Context, ct contender) (procStats, error) {
	if ct.raw == "store" {
		return b.rawStoreDrain(ctx, ct)
	}
	if ct.claimers <= 1 {
		return b.rawLoop(ctx, ct)
	}
	start := time.Now()
	errs := make([]error, ct.claimers)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { _, errs[i] = b.rawLoop(ctx, ct) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return procStats{}, err
	}
	return procStats{wall: time.Since(start)}, nil
}

// rawLoop claims and deletes until a claim comes back empty.
func (b *runner) rawLoop(ctx context.Context, ct contender) (procStats, error) {
	start := time.Now()
	limit := ct.batch
	if ct.raw == "exact" {
		limit = 1
	}
	for {
		ids, token, err := b.rawClaim(ctx, limit, ct.raw == "exact")
		if err != nil {
			return procStats{}, err
		}
		if len(ids) == 0 {
			return procStats{wall: time.Since(start)}, nil
		}
		if ct.raw == "exact" {
			err = b.rawDeleteReserved(ctx, ids[0])
		} else {
			err = b.rawDeleteFenced(ctx, token, ids)
		}
		if err != nil {
			return procStats{}, err
		}
	}
}

// rawDeleteFenced is the grouped delete the worker runs: only rows still
// carrying the claim's reserved_at, with the ids deleted returned where
// the server has DELETE ... RETURNING (not MySQL).
func (b *runner) rawDeleteFenced(ctx context.Context, token int64, ids []any) error {
	query := b.rawSQL("delete from %s where %s = ? and %s in (%s)", b.qi(b.cfg.JobsTable), b.qi("reserved_at"), b.qi("id"), marks(len(ids)))
	args := append([]any{token}, ids...)
	if b.q.Dialect().Name() == appconfig.EngineMySQL && !strings.Contains(b.q.ServerVersion(), "MariaDB") {
		_, err := b.q.DB().ExecContext(ctx, query, args...)
		return err
	}
	rows, err := b.q.DB().QueryContext(ctx, query+" returning "+b.qi("id"), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

func (b *runner) qi(ident string) string { return b.q.Dialect().Quote(ident) }

func (b *runner) rawSQL(format string, args ...any) string {
	return b.q.Dialect().Rebind(fmt.Sprintf(format, args...))
}

func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// rawClaim runs the claim transaction: Laravel's select with laraworker's
// displayName filter and lock, then the reserve update.
func (b *runner) rawClaim(ctx context.Context, limit int, perJob bool) ([]any, int64, error) {
	tx, err := b.q.DB().BeginTx(ctx, b.rawTxOptions(ctx))
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	now := time.Now().Unix()
	sel := b.rawSQL("select * from %s where %s = ? and ((%s is null and %s <= ?) or (%s <= ?)) and (%s like ? escape '!') order by %s asc limit %d %s",
		b.qi(b.cfg.JobsTable), b.qi("queue"), b.qi("reserved_at"), b.qi("available_at"), b.qi("reserved_at"), b.qi("payload"), b.qi("id"), limit, b.q.LockClause())
	pattern := `%"displayName":"` + strings.ReplaceAll(benchClass, `\`, `\\`) + `"%`
	ids, attempts, err := scanIDs(tx.QueryContext(ctx, sel, "default", now, now-int64(b.cfg.RetryAfter), pattern))
	if err != nil || len(ids) == 0 {
		return nil, 0, err
	}
	if perJob {
		_, err = tx.ExecContext(ctx, b.rawSQL("update %s set %s = ?, %s = ? where %s = ?", b.qi(b.cfg.JobsTable), b.qi("reserved_at"), b.qi("attempts"), b.qi("id")), now, attempts[0]+1, ids[0])
	} else {
		_, err = tx.ExecContext(ctx, b.rawSQL("update %s set %s = ?, %s = %s + 1 where %s in (%s)", b.qi(b.cfg.JobsTable), b.qi("reserved_at"), b.qi("attempts"), b.qi("attempts"), b.qi("id"), marks(len(ids))), append([]any{now}, ids...)...)
	}
	if err != nil {
		return nil, 0, err
	}
	return ids, now, tx.Commit()
}

// scanIDs reads id and attempts of a `select *`, scanning every column as
// the driver's raw bytes.
func scanIDs(rows *sql.Rows, err error) ([]any, []int64, error) {
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	idAt, attAt := slices.Index(cols, "id"), slices.Index(cols, "attempts")
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var ids []any
	var attempts []int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		var id, att int64
		if _, err := fmt.Sscan(string(vals[idAt]), &id); err != nil {
			return nil, nil, err
		}
		if _, err := fmt.Sscan(string(vals[attAt]), &att); err != nil {
			return nil, nil, err
		}
		ids, attempts = append(ids, id), append(attempts, att)
	}
	return ids, attempts, rows.Err()
}

// rawTxOptions: the queue's pool may already run at the dialect's level
// (sqldb.Open sets READ COMMITTED per MySQL connection); then the raw
// loop, like the worker, sends no SET TRANSACTION of its own.
func (b *runner) rawTxOptions(ctx context.Context) *sql.TxOptions {
	if b.rawTx == nil {
		b.rawTx = &rawTxChoice{opts: b.q.Dialect().TxOptions()}
		if b.rawTx.opts != nil && b.rawTx.opts.Isolation == sql.LevelReadCommitted {
			for _, v := range []string{"@@session.transaction_isolation", "@@session.tx_isolation"} {
				var level string
				if err := b.q.DB().QueryRowContext(ctx, "select "+v).Scan(&level); err == nil {
					if level == "READ-COMMITTED" {
						b.rawTx.opts = nil
					}
					break
				}
			}
		}
	}
	return b.rawTx.opts
}

type rawTxChoice struct{ opts *sql.TxOptions }

// rawDeleteReserved is Laravel's deleteReserved transaction.
func (b *runner) rawDeleteReserved(ctx context.Context, id any) error {
	tx, err := b.q.DB().BeginTx(ctx, b.rawTxOptions(ctx))
	if err != nil {
		return err
	}
	defer tx.Rollback()
	lock := b.q.Dialect().ForUpdate()
	if _, _, err := scanIDs(tx.QueryContext(ctx, b.rawSQL("select * from %s where %s = ? limit 1 %s", b.qi(b.cfg.JobsTable), b.qi("id"), lock), id)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, b.rawSQL("delete from %s where %s = ?", b.qi(b.cfg.JobsTable), b.qi("id")), id); err != nil {
		return err
	}
	return tx.Commit()
}

// latencyMeasure is the pick-up latency of one latency phase.
type latencyMeasure struct {
	Jobs   int     `json:"jobs"`
	Missed int     `json:"missed"` // jobs whose pick-up was not recorded
	P50ms  float64 `json:"p50_ms"`
	P99ms  float64 `json:"p99_ms"`
	Load1  float64 `json:"load1"`
}

// pickupTable records pick-up times; named after the jobs table, so runs
// on other bench tables of the same database do not share it.
func (b *runner) pickupTable() string { return b.cfg.JobsTable + "_pickup" }

// measureLatency runs the contender as a daemon (--sleep=0, --max-jobs n)
// on an empty queue, pushes n jobs one by one at rate per second and
// reads, per job, the database clock at its insert and at the update that
// reserved it (recorded by triggers, so no worker is changed).
func (b *runner) measureLatency(ct contender, n, rate int) (latencyMeasure, error) {
	ctx := b.c.Context
	m := latencyMeasure{Jobs: n}
	if err := b.reset(); err != nil {
		return m, err
	}
	if err := b.execAll(ctx, b.pickupTriggers()); err != nil {
		return m, fmt.Errorf("creating the pick-up triggers: %w", err)
	}
	defer func() { _ = b.execAll(context.Background(), b.dropPickupTriggers()) }()
	var cmds []*exec.Cmd
	maxJobs := fmt.Sprint(n)
	if ct.php {
		cmds = append(cmds, b.phpCommand("--sleep=0", "--max-jobs="+maxJobs))
	} else {
		cmds = append(cmds, b.workCommand(ct, "--sleep", "0", "--max-jobs", maxJobs))
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.runProcs(ctx, cmds, time.Duration(n/rate+60)*time.Second)
		done <- err
	}()
	time.Sleep(2 * time.Second) // past the worker's start-up
	m.Load1 = load1()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for range n {
		<-tick.C
		raw, err := b.jobs.payload()
		if err == nil {
			_, err = b.q.Push(ctx, jobqueue.PushItem{Queue: "default", Payload: raw})
		}
		if err != nil {
			tick.Stop()
			killAll(cmds)
			<-done
			return m, err
		}
	}
	tick.Stop()
	if err := <-done; err != nil {
		return m, err
	}
	return b.readPickups(ctx, m)
}

func (b *runner) readPickups(ctx context.Context, m latencyMeasure) (latencyMeasure, error) {
	rows, err := b.q.DB().QueryContext(ctx, b.rawSQL("select %s - %s from %s where %s is not null",
		b.qi("picked_at"), b.qi("pushed_at"), b.qi(b.pickupTable()), b.qi("picked_at")))
	if err != nil {
		return m, err
	}
	defer rows.Close()
	var ms []float64
	for rows.Next() {
		var s float64
		if err := rows.Scan(&s); err != nil {
			return m, err
		}
		ms = append(ms, s*1000)
	}
	if err := rows.Err(); err != nil {
		return m, err
	}
	m.Missed = m.Jobs - len(ms)
	m.P50ms, m.P99ms = percentile(ms, 50), percentile(ms, 99)
	return m, nil
}

// percentile is the nearest-rank percentile.
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(rank, len(s)-1))]
}

func (b *runner) execAll(ctx context.Context, stmts []string) error {
	for _, s := range stmts {
		if _, err := b.q.DB().ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// pickupTriggers record, per job, the database clock when its row is
// inserted and when it is first reserved (reserved_at set).
func (b *runner) pickupTriggers() []string {
	p, j := b.qi(b.pickupTable()), b.qi(b.cfg.JobsTable)
	ins, upd := b.qi(b.pickupTable()+"_ins"), b.qi(b.pickupTable()+"_upd")
	switch b.cfg.Driver {
	case appconfig.EnginePgSQL:
		const clock = "extract(epoch from clock_timestamp())"
		return append(b.dropPickupTriggers(),
			"create table "+p+" (job_id bigint primary key, pushed_at double precision not null, picked_at double precision)",
			"create function "+ins+"() returns trigger language plpgsql as $$begin insert into "+p+" (job_id, pushed_at) values (new.id, "+clock+"); return null; end$$",
			"create function "+upd+"() returns trigger language plpgsql as $$begin if new.reserved_at is not null then update "+p+" set picked_at = "+clock+" where job_id = new.id and picked_at is null; end if; return null; end$$",
			"create trigger "+ins+" after insert on "+j+" for each row execute function "+ins+"()",
			"create trigger "+upd+" after update on "+j+" for each row execute function "+upd+"()")
	case appconfig.EngineSQLite:
		const clock = "((julianday('now') - 2440587.5) * 86400.0)"
		return append(b.dropPickupTriggers(),
			"create table "+p+" (job_id integer primary key, pushed_at real not null, picked_at real)",
			"create trigger "+ins+" after insert on "+j+" begin insert into "+p+" (job_id, pushed_at) values (new.id, "+clock+"); end",
			"create trigger "+upd+" after update on "+j+" when new.reserved_at is not null begin update "+p+" set picked_at = "+clock+" where job_id = new.id and picked_at is null; end")
	}
	const clock = "unix_timestamp(sysdate(6))"
	return append(b.dropPickupTriggers(),
		"create table "+p+" (job_id bigint primary key, pushed_at double not null, picked_at double null)",
		"create trigger "+ins+" after insert on "+j+" for each row insert into "+p+" (job_id, pushed_at) values (new.id, "+clock+")",
		"create trigger "+upd+" after update on "+j+" for each row update "+p+" set picked_at = "+clock+" where job_id = new.id and picked_at is null and new.reserved_at is not null")
}

func (b *runner) dropPickupTriggers() []string {
	p, j := b.qi(b.pickupTable()), b.qi(b.cfg.JobsTable)
	ins, upd := b.qi(b.pickupTable()+"_ins"), b.qi(b.pickupTable()+"_upd")
	switch b.cfg.Driver {
	case appconfig.EnginePgSQL:
		return []string{"drop trigger if exists " + ins + " on " + j, "drop trigger if exists " + upd + " on " + j,
			"drop function if exists " + ins + "()", "drop function if exists " + upd + "()", "drop table if exists " + p}
	}
	return []string{"drop trigger if exists " + ins, "drop trigger if exists " + upd, "drop table if exists " + p}
}
