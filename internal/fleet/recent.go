package fleet

import (
	"context"
	"fmt"
	"strings"
)

// The recent jobs table keeps, per worker, a ring of the last
// RecentPerWorker jobs it finished: the worker keeps them in memory and
// writes the ones finished since its last heartbeat with the heartbeat
// (never per job), each into its slot, replacing the job that was there.
// Rows are pruned RecentKeep after they finished, so the table holds at
// most RecentPerWorker rows per worker seen in a day.

// RecentPerWorker is the ring's size: the most jobs a worker lists.
const RecentPerWorker = 100

// Outcomes a recent job ends with.
const (
	OutcomeDone     = "done"
	OutcomeFailed   = "failed"
	OutcomeReleased = "released"
)

// RecentJob is one finished job, a row of the recent jobs table.
type RecentJob struct {
	Worker  string // the worker row's id
	Slot    int64  // its place in the worker's ring
	JobID   int64
	UUID    string
	Queue   string
	Class   string
	Outcome string // OutcomeDone, OutcomeFailed or OutcomeReleased
	Attempt int64
	// FinishedAt is when the run ended (unix seconds); RunMS how long it
	// ran, WaitMS how long it waited from available_at to its start.
	FinishedAt    int64
	RunMS, WaitMS int64
}

var recentColumns = []string{"worker", "slot", "job_id", "uuid", "queue", "class", "outcome", "attempt", "finished_at", "run_ms", "wait_ms"}

// PutRecent writes jobs into worker's ring, each replacing the row of its
// slot.
func (s *Store) PutRecent(ctx context.Context, worker string, jobs []RecentJob) error {
	if len(jobs) == 0 {
		return nil
	}
	stmt := s.upsert(s.t.Recent, recentColumns, []string{"worker", "slot"}, recentColumns[2:], false)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, j := range jobs {
		if _, err := tx.ExecContext(ctx, stmt, clip(worker, 191), j.Slot, j.JobID, clip(j.UUID, 64), clip(j.Queue, 191), clip(j.Class, 191),
			clip(j.Outcome, 16), j.Attempt, j.FinishedAt, j.RunMS, j.WaitMS); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Recent returns up to limit recent jobs, the last finished first; of
// class only, when it is set.
func (s *Store) Recent(ctx context.Context, limit int, class string) ([]RecentJob, error) {
	q := s.d.Quote
	cols := make([]string, len(recentColumns))
	for i, c := range recentColumns {
		cols[i] = q(c)
	}
	where, args := "", []any{}
	if class != "" {
		where, args = " where "+q("class")+" = ?", append(args, class)
	}
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(fmt.Sprintf("select %s from %s%s order by %s desc, %s desc limit %d",
		strings.Join(cols, ", "), q(s.t.Recent), where, q("finished_at"), q("job_id"), limit)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RecentJob
	for rows.Next() {
		var j RecentJob
		if err := rows.Scan(&j.Worker, &j.Slot, &j.JobID, &j.UUID, &j.Queue, &j.Class, &j.Outcome, &j.Attempt,
			&j.FinishedAt, &j.RunMS, &j.WaitMS); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// recentRing is a worker's last jobs in memory, and which of them are not
// written yet.
type recentRing struct {
	jobs  [RecentPerWorker]RecentJob
	dirty [RecentPerWorker]bool
	next  int64
}

func (r *recentRing) push(j RecentJob) {
	slot := r.next % RecentPerWorker
	r.next++
	j.Slot = slot
	r.jobs[slot], r.dirty[slot] = j, true
}

// take returns the jobs not written yet, oldest first, and marks them
// written.
func (r *recentRing) take() []RecentJob {
	var out []RecentJob
	for i := range RecentPerWorker {
		slot := (r.next + int64(i)) % RecentPerWorker
		if r.dirty[slot] {
			out = append(out, r.jobs[slot])
			r.dirty[slot] = false
		}
	}
	return out
}

// putBack marks jobs a failed write could not store as not written, unless
// a newer job took their slot meanwhile.
func (r *recentRing) putBack(jobs []RecentJob) {
	for _, j := range jobs {
		if r.jobs[j.Slot] == j {
			r.dirty[j.Slot] = true
		}
	}
}
