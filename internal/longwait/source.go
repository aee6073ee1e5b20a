package longwait

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
)

// RuntimeWindow is how far back the fleet's history gives a queue's mean
// runtime.
const RuntimeWindow = 15 * time.Minute

// SnapshotSource measures waits with the dashboard's snapshot of the queue
// connection (its bounded reads of the jobs table, or of the Redis lists
// and sets: each queue's ready count and its oldest ready job's age) and
// laraworker's fleet tables (the live workers on each queue, the mean
// runtime over RuntimeWindow, PHP's workers included when the bridge
// records them). The snapshot must be running (Snapshot.Run).
type SnapshotSource struct {
	Snapshot *snapshot.Snapshot
	Fleet    *fleet.Store
	// Now is the clock the workers' heartbeats are judged by. Default
	// time.Now.
	Now func() time.Time
}

// Measure refreshes the snapshot and reads the queues' waits from it.
func (s *SnapshotSource) Measure(ctx context.Context, queues []string) ([]Measure, error) {
	if err := s.Snapshot.Refreshed(ctx); err != nil {
		return nil, err
	}
	sum := s.Snapshot.Current()
	if sum.Err != "" {
		return nil, errors.New(sum.Err)
	}
	if !sum.JobsCaughtUp {
		return nil, ErrNotReady
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	runtimes := s.runtimes(ctx, now)
	out := make([]Measure, 0, len(queues))
	for _, q := range queues {
		m := Measure{Queue: q, Runtime: runtimes[q], Capacity: capacity(sum, q, now)}
		for _, c := range sum.Queues {
			if c.Queue == q {
				m.Ready, m.Oldest = c.Ready, c.OldestReady
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// runtimes are the queues' mean runtimes over RuntimeWindow, from the
// fleet's history (none when it cannot be read or holds no timings).
func (s *SnapshotSource) runtimes(ctx context.Context, now time.Time) map[string]time.Duration {
	stats, err := s.Fleet.ClassStats(ctx, now.Add(-RuntimeWindow).Unix())
	out := map[string]time.Duration{}
	if err != nil {
		return out
	}
	total, count := map[string]int64{}, map[string]int64{}
	for _, c := range stats {
		if !c.Timed {
			continue
		}
		total[c.Queue] += c.Run.TotalMS
		for _, n := range c.Run.Counts {
			count[c.Queue] += n
		}
	}
	for q, n := range count {
		if n > 0 {
			out[q] = time.Duration(total[q]) * time.Millisecond / time.Duration(n)
		}
	}
	return out
}

// capacity is how many jobs of queue the live, unpaused workers run at
// once: a Go worker its concurrency, a PHP worker one.
func capacity(sum *snapshot.Summary, queue string, now time.Time) int64 {
	held := sum.Held()
	var n int64
	for _, w := range sum.Workers {
		state := snapshot.WorkerState(w, held, now)
		if !snapshot.Alive(state) || state == "paused" || !slices.Contains(w.Queues, queue) || slices.Contains(w.PausedQs, queue) {
			continue
		}
		if w.Kind == fleet.KindGo {
			n += max(w.Concurrency, 1)
		} else {
			n++
		}
	}
	return n
}
