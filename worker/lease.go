package worker

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// startLease refreshes reserved_at of jobs running longer than LeaseEvery
// (a third of retry_after by default), in one statement per tick, so no
// worker, Go or PHP, takes a job that is still running (Laravel's issue
// #52493). A crashed worker refreshes nothing, so its jobs come back after
// retry_after, as in Laravel.
func (w *Worker) startLease(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	every := w.opts.LeaseEvery
	if every <= 0 {
		every = time.Duration(w.q.Config().RetryAfter) * time.Second / 3
	}
	if every < time.Second {
		every = time.Second
	}
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.extendLeases(ctx, every)
			}
		}
	}()
	return done
}

func (w *Worker) extendLeases(ctx context.Context, every time.Duration) {
	ids := w.running.olderThan(every, w.now())
	if len(ids) == 0 {
		return
	}
	if _, err := w.q.ExtendReservation(ctx, ids...); err != nil && ctx.Err() == nil {
		w.log.Error().Err(err).Int("jobs", len(ids)).Msg("refreshing reservations failed")
		return
	}
	w.metrics.leasesExtended(len(ids))
}

// skipSet remembers jobs this worker gave back to PHP, so its claims
// exclude them instead of reserving them again in a loop. Entries expire
// after skipFor (the row is usually gone by then; if not, it is claimed
// and given back once more) and at most maxSkipped are kept, so the set
// stays small whatever the worker's uptime.
type skipSet struct {
	mu      sync.Mutex
	entries []skipped
}

type skipped struct {
	id    int64
	since time.Time
}

const (
	maxSkipped = 1000
	skipFor    = 5 * time.Minute
)

func (s *skipSet) add(id int64, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, skipped{id, now})
	if len(s.entries) > maxSkipped {
		s.entries = append(s.entries[:0], s.entries[len(s.entries)-maxSkipped:]...)
	}
}

// list returns the ids still excluded at now, dropping expired ones.
func (s *skipSet) list(now time.Time) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := s.entries[:0]
	for _, e := range s.entries {
		if now.Sub(e.since) < skipFor {
			keep = append(keep, e)
		}
	}
	s.entries = keep
	if len(keep) == 0 {
		return nil
	}
	ids := make([]int64, len(keep))
	for i, e := range keep {
		ids[i] = e.id
	}
	return ids
}

// rssMB is the process's resident set size in MB (Linux), 0 if unknown.
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return float64(pages*int64(os.Getpagesize())) / (1 << 20)
}
