package console

import (
	"fmt"
	"io"
	"time"
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

// bigTable loads delayed jobs before (older ids) and then after (newer
// ids) the ready ones and drains the ready ones with laraworker at
// concurrency 128 and with its raw ceiling.
func (b *bench) bigTable(delayed, ready int, small map[string]float64) (*bigResult, error) {
	res := &bigResult{Delayed: delayed, Ready: ready}
	for _, name := range []string{"lw-c128", "raw-b128"} {
		res.Small = append(res.Small, bigSmall{name, small[name]})
	}
	for _, order := range []string{"older", "newer"} {
		for _, index := range b.indexVariants() {
			for _, ct := range allContenders() {
				if ct.name != "lw-c128" && ct.name != "raw-b128" {
					continue
				}
				m, err := b.bigDrain(ct, order, index, delayed, ready)
				if err != nil {
					return nil, fmt.Errorf("%s, delayed %s, index %s: %w", ct.name, order, index, err)
				}
				res.Cases = append(res.Cases, bigCase{ct.name, order, index, m})
				b.progress("large table: %-9s delayed rows %s, index %-9s %8.0f jobs/s  load %.2f", ct.name, order, index, m.JobsPerSec, m.Load1)
			}
		}
	}
	return res, b.reset()
}

// bigDrain sets up the table (delayed and ready jobs in the given order,
// the index) and times the drain of the ready jobs.
func (b *bench) bigDrain(ct contender, order, index string, delayed, ready int) (drainMeasure, error) {
	ctx := b.c.Context
	m := drainMeasure{Jobs: ready}
	if err := b.reset(); err != nil {
		return m, err
	}
	if err := b.setIndex(index); err != nil {
		return m, err
	}
	var base procStats
	if ct.raw == "" {
		var err error
		if base, err = b.runProcs(ctx, b.drainCommands(ct), time.Minute); err != nil {
			return m, err
		}
	}
	const later = 24 * time.Hour
	if order == "older" {
		if err := b.pushJobs(ctx, delayed, later); err != nil {
			return m, err
		}
	}
	if err := b.pushJobs(ctx, ready, 0); err != nil {
		return m, err
	}
	if order == "newer" {
		if err := b.pushJobs(ctx, delayed, later); err != nil {
			return m, err
		}
	}
	if err := b.analyze(); err != nil {
		return m, err
	}
	m.Load1 = load1()
	var st procStats
	var err error
	if ct.raw != "" {
		st, err = b.rawDrain(ctx, ct)
	} else {
		st, err = b.runProcs(ctx, b.drainCommands(ct), 30*time.Minute)
	}
	if err != nil {
		return m, err
	}
	if left, err := b.countRows(b.cfg.JobsTable); err != nil || left != delayed {
		return m, fmt.Errorf("drain left %d jobs, want the %d delayed ones (%v)", left, delayed, err)
	}
	m.WallSec, m.StartSec = st.wall.Seconds(), base.wall.Seconds()
	m.JobsPerSec = float64(ready) / max(st.wall-base.wall, time.Millisecond).Seconds()
	if ct.raw == "" {
		m.CPUPer1k = float64((st.cpu - base.cpu).Milliseconds()) / float64(ready) * 1000
	}
	m.PeakRSSMB = float64(st.maxRSSKB) / 1024
	return m, nil
}

// analyze refreshes the planner's statistics after a bulk load, as a
// production table's would be.
func (b *bench) analyze() error {
	stmt := "analyze " + b.qi(b.cfg.JobsTable)
	if b.cfg.Driver == "mysql" || b.cfg.Driver == "mariadb" {
		stmt = "analyze table " + b.qi(b.cfg.JobsTable)
	}
	rows, err := b.q.DB().QueryContext(b.c.Context, stmt)
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
		rows = append(rows, []string{c.Contender, c.Delayed, c.Index, fmt.Sprintf("%.0f", c.Drain.JobsPerSec), ratio, fmt.Sprintf("%.2f", c.Drain.Load1)})
	}
	_ = writeTable(w, []string{"contender", "delayed rows", "index", "jobs/s", "of small table", "load1"}, rows)
}

// indexVariants: Laravel's migration (index on queue only) and laraworker's
// optional composite index.
func (b *bench) indexVariants() []string { return []string{"default", "composite"} }

func (b *bench) setIndex(index string) error {
	if index == "composite" {
		return b.q.CreateClaimIndex(b.c.Context)
	}
	return b.q.DropClaimIndex(b.c.Context)
}
