package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// bigResult is the large-table scenario: the same drains with many delayed
// jobs (available_at in the future) in the table.
type bigResult struct {
	Delayed int        `json:"delayed"`
	Ready   int        `json:"ready"`
	Cases   []bigCase  `json:"cases"`
	Small   []bigSmall `json:"small_table"`
}

// bigCase is one drain of the ready jobs: which contender, where the
// delayed rows sit (older or newer ids than the ready ones) and which index.
type bigCase struct {
	Contender string       `json:"contender"`
	Delayed   string       `json:"delayed_rows"` // "older" or "newer"
	Index     string       `json:"index"`
	Drain     drainMeasure `json:"drain"`
}

// bigSmall is the small-table median of the same run, for the ratio.
type bigSmall struct {
	Contender  string  `json:"contender"`
	JobsPerSec float64 `json:"jobs_per_sec"`
}

// bigTable puts delayed jobs (available in 24 h) on either side of the
// ready ones, older ids then newer ids, and drains the ready ones with
// laraworker at concurrency 128 and with its raw ceiling, with Laravel's
// index and with laraworker's claim index (`tables --index`). Rows get explicit ids so the ready
// set can be put back with the same ids between drains.
func (b *runner) bigTable(delayed, ready int, small map[string]float64) (*bigResult, error) {
	res := &bigResult{Delayed: delayed, Ready: ready}
	for _, name := range []string{"lw-c128", "raw-b128"} {
		res.Small = append(res.Small, bigSmall{name, small[name]})
	}
	limit := b.c.Duration("big-time")
	for _, order := range []string{"newer", "older"} {
		readyFrom, delayedFrom := int64(1), int64(ready+1)
		if order == "older" {
			readyFrom, delayedFrom = int64(delayed+1), 1
		}
		if err := b.reset(); err != nil {
			return nil, err
		}
		if err := b.insertRows(delayedFrom, delayed, 24*time.Hour); err != nil {
			return nil, err
		}
		for _, index := range b.indexVariants() {
			if err := b.setIndex(index); err != nil {
				return nil, err
			}
			for _, ct := range allContenders() {
				if ct.name != "lw-c128" && ct.name != "raw-b128" {
					continue
				}
				m, err := b.bigDrain(ct, readyFrom, ready, delayed, limit)
				if err != nil {
					return nil, fmt.Errorf("%s, delayed %s, index %s: %w", ct.name, order, index, err)
				}
				res.Cases = append(res.Cases, bigCase{ct.name, order, index, m})
				b.progress("large table: %-9s delayed rows %s, index %-9s %8.0f jobs/s (%d jobs%s)  load %.2f", ct.name, order, index, m.JobsPerSec, m.Jobs, killedNote(m), m.Load1)
			}
		}
	}
	if err := b.setIndex("default"); err != nil {
		return nil, err
	}
	return res, b.reset()
}

// killedNote marks a drain that was killed in a progress line.
func killedNote(m drainMeasure) string {
	if m.Killed {
		return "; killed, still running past its limit"
	}
	return ""
}

// cutAtLimit: a run killed at its limit (a worker still in its first
// claim behind a large backlog; --max-time is checked between claims)
// marks the measure Killed instead of failing it: the round counts what
// was drained. Other errors are returned as they are.
func (m *drainMeasure) cutAtLimit(err error) error {
	if errors.Is(err, errKilledAtLimit) {
		m.Killed = true
		return nil
	}
	return err
}

// drainGrace is how long a time-limited drain may run past its limit
// (its workers' --max-time) before it is killed.
const drainGrace = 2 * time.Minute

// bigDrain puts the ready rows (back) in place and drains them for at most
// limit; the rate counts the jobs actually drained.
func (b *runner) bigDrain(ct contender, readyFrom int64, ready, delayed int, limit time.Duration) (drainMeasure, error) {
	ctx := b.c.Context
	var m drainMeasure
	if err := b.deleteReady(); err != nil {
		return m, err
	}
	var base procStats
	cmds := func() []*exec.Cmd {
		var cmds []*exec.Cmd
		for range b.goProcs() {
			cmds = append(cmds, b.workCommand(ct, "--sleep", "0", "--stop-when-empty", "--max-time", strconv.Itoa(int(limit.Seconds()))))
		}
		return cmds
	}
	if ct.raw == "" {
		var err error
		base, err = b.runProcs(ctx, cmds(), time.Minute)
		if err = m.cutAtLimit(err); m.Killed {
			// The empty-queue run's one claim read every delayed row
			// for over a minute (10,000,000 on MariaDB): no start-up
			// to subtract.
			base = procStats{}
		}
		if err != nil {
			return m, err
		}
	}
	if err := b.insertRows(readyFrom, ready, 0); err != nil {
		return m, err
	}
	if err := b.analyze(); err != nil {
		return m, err
	}
	m.Load1 = load1()
	server := b.startServerMeter()
	var st procStats
	var err error
	if ct.raw != "" {
		rctx, cancel := context.WithTimeout(ctx, limit)
		st, err = b.rawDrain(rctx, ct)
		if err != nil && rctx.Err() != nil { // the time limit, not a failure
			st, err = procStats{wall: limit}, nil
		}
		cancel()
	} else {
		st, err = b.runProcs(ctx, cmds(), limit+drainGrace)
		err = m.cutAtLimit(err)
	}
	if err != nil {
		return m, err
	}
	left, err := b.countRows(b.cfg.JobsTable)
	if err != nil {
		return m, err
	}
	m.Jobs = ready - (left - delayed)
	m.ServerCPUPer1k = server.per1k(m.Jobs)
	m.WallSec, m.StartSec = st.wall.Seconds(), base.wall.Seconds()
	m.JobsPerSec = float64(m.Jobs) / max(st.wall-base.wall, time.Millisecond).Seconds()
	if ct.raw == "" && m.Jobs > 0 {
		m.CPUPer1k = float64((st.cpu - base.cpu).Milliseconds()) / float64(m.Jobs) * 1000
	}
	m.PeakRSSMB = float64(st.maxRSSKB) / 1024
	return m, nil
}

// deleteReady removes what is left of the ready set (and any reservation).
func (b *runner) deleteReady() error {
	_, err := b.q.DB().ExecContext(b.c.Context, b.rawSQL("delete from %s where %s <= ?", b.qi(b.cfg.JobsTable), b.qi("available_at")), time.Now().Unix()+3600)
	return err
}

// insertRows inserts n jobs with ids from first on, available after delay.
func (b *runner) insertRows(first int64, n int, delay time.Duration) error {
	const perStatement = 500
	cols := []string{"id", "queue", "attempts", "reserved_at", "available_at", "created_at", "payload"}
	for i := range cols {
		cols[i] = b.qi(cols[i])
	}
	now := time.Now().Unix()
	for start := 0; start < n; start += perStatement {
		rows := min(perStatement, n-start)
		args := make([]any, 0, rows*len(cols))
		for r := range rows {
			raw, err := b.jobs.payload()
			if err != nil {
				return err
			}
			args = append(args, first+int64(start+r), "default", 0, nil, now+int64(delay.Seconds()), now, string(raw))
		}
		row := "(" + marks(len(cols)) + ")"
		query := b.rawSQL("insert into %s (%s) values %s", b.qi(b.cfg.JobsTable), strings.Join(cols, ", "),
			strings.TrimSuffix(strings.Repeat(row+", ", rows), ", "))
		if _, err := b.q.DB().ExecContext(b.c.Context, query, args...); err != nil {
			return err
		}
	}
	return nil
}

// analyze refreshes the planner's statistics after a bulk load, as a
// production table's would be.
func (b *runner) analyze() error { return analyzeTable(b.c.Context, b.q) }

func analyzeTable(ctx context.Context, q *database.Queue) error {
	stmt := "analyze " + q.Dialect().Quote(q.Config().JobsTable)
	if q.Dialect().Name() == appconfig.EngineMySQL {
		stmt = "analyze table " + q.Dialect().Quote(q.Config().JobsTable)
	}
	rows, err := q.DB().QueryContext(ctx, stmt)
	if err != nil {
		return err
	}
	return rows.Close()
}

func (r *bigResult) print(w io.Writer) {
	fmt.Fprintf(w, "\nlarge table: %d delayed jobs (available in 24 h) and %d ready ones\n", r.Delayed, r.Ready)
	small := map[string]float64{}
	for _, s := range r.Small {
		small[s.Contender] = s.JobsPerSec
	}
	var rows [][]string
	for _, c := range r.Cases {
		ratio := "-"
		if s := small[c.Contender]; s > 0 {
			ratio = fmt.Sprintf("%.0f%%", 100*c.Drain.JobsPerSec/s)
		}
		rate := fmt.Sprintf("%.0f", c.Drain.JobsPerSec)
		if c.Drain.Killed {
			rate += " (killed)"
		}
		rows = append(rows, []string{c.Contender, c.Delayed, c.Index, rate, ratio, fmt.Sprintf("%.2f", c.Drain.Load1)})
	}
	_ = console.WriteTable(w, []string{"contender", "delayed rows", "index", "jobs/s", "of small table", "load1"}, rows)
}

// indexVariants: Laravel's migration (index on queue only) and laraworker's
// optional claim index (`laraworker tables --index`).
func (b *runner) indexVariants() []string { return []string{"default", "claim-index"} }

func (b *runner) setIndex(index string) error {
	if index == "claim-index" {
		return b.q.CreateClaimIndex(b.c.Context)
	}
	return b.q.DropClaimIndex(b.c.Context)
}
