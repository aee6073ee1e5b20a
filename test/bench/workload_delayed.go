package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/laraworker/laraworker/store/database"
)

// delayedBacklog drains ready jobs whose ids are higher than those of many
// delayed ones (available in 24 h), against the same ready jobs alone in a
// second set of tables (so the delayed rows are written once per run, not
// once per round). Each drain stops after --drain-time; the rate counts
// what was drained.
func (b *runner) delayedBacklog(rep *report, ct contender) error {
	delayed, ready, limit := b.c.Int("delayed-rows"), b.c.Int("ready-rows"), b.c.Duration("drain-time")
	w := &workloadResult{Workload: wlDelayed, Contender: ct.name, Index: b.indexLabel(),
		Setup:    fmt.Sprintf("%d ready jobs behind %d delayed ones (lower ids, available in 24 h), drained for at most %s", ready, delayed, limit),
		Baseline: fmt.Sprintf("the same %d ready jobs alone", ready)}
	if err := b.reset(); err != nil {
		return err
	}
	if err := b.applyIndex(); err != nil {
		return err
	}
	if err := b.insertRows(1, delayed, 24*time.Hour); err != nil {
		return err
	}
	err := b.withTables("_alone", func(alone *runner) error {
		if err := alone.applyIndex(); err != nil {
			return err
		}
		for range b.c.Int("rounds") {
			base, err := alone.bigDrain(ct, 1, ready, 0, limit)
			if err != nil {
				return fmt.Errorf("alone: %w", err)
			}
			load, err := b.bigDrain(ct, int64(delayed+1), ready, delayed, limit)
			if err != nil {
				return fmt.Errorf("behind the delayed rows: %w", err)
			}
			w.add(load, base)
			b.progressRound(w)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := checkDelayedUntouched(b, delayed); err != nil {
		return err
	}
	rep.Workloads = append(rep.Workloads, w)
	return b.reset()
}

// checkDelayedUntouched: the delayed rows are all there, none reserved
// or attempted (ready rows a drain cut by --drain-time left may remain).
func checkDelayedUntouched(b *runner, delayed int) error {
	var total, pristine int
	query := b.rawSQL("select coalesce(sum(case when %[3]s > ? then 1 else 0 end), 0), coalesce(sum(case when %[3]s > ? and %[1]s is null and %[2]s = 0 then 1 else 0 end), 0) from %[4]s",
		b.qi("reserved_at"), b.qi("attempts"), b.qi("available_at"), b.qi(b.cfg.JobsTable))
	later := time.Now().Unix() + 3600
	if err := b.q.DB().QueryRowContext(b.c.Context, query, later, later).Scan(&total, &pristine); err != nil {
		return err
	}
	if total != delayed || pristine != delayed {
		return fmt.Errorf("%d delayed jobs left, %d of them untouched; want all %d untouched", total, pristine, delayed)
	}
	return nil
}

// withTables runs fn with a copy of the runner on a second set of bench
// tables (names with suffix), created for it and dropped after.
func (b *runner) withTables(suffix string, fn func(*runner) error) error {
	cfg := b.cfg
	cfg.JobsTable, cfg.FailedTable, cfg.BatchesTable = cfg.JobsTable+suffix, cfg.FailedTable+suffix, cfg.BatchesTable+suffix
	q, err := database.Open(b.c.Context, cfg, database.Options{})
	if err != nil {
		return err
	}
	defer q.Close()
	_ = q.DropTables(b.c.Context)
	if err := q.CreateTables(b.c.Context); err != nil {
		return err
	}
	defer q.DropTables(b.c.Context)
	other := *b
	other.q, other.cfg, other.rawTx = q, cfg, nil
	if other.envFile, err = other.writeEnvFile(".env" + suffix); err != nil {
		return err
	}
	defer os.Remove(filepath.Join(b.dir, ".env"+suffix))
	return fn(&other)
}

// indexLabel names the index the workload runs with.
func (b *runner) indexLabel() string {
	if b.c.Bool("claim-index") {
		return "claim index"
	}
	return "Laravel's"
}

// applyIndex creates laraworker's opt-in claim index when --claim-index
// asks for it, and makes sure it is absent otherwise.
func (b *runner) applyIndex() error {
	if b.c.Bool("claim-index") {
		return b.q.CreateClaimIndex(b.c.Context)
	}
	return b.q.DropClaimIndex(b.c.Context)
}
