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
// exclude them instead of reserving them again in a loop.
type skipSet struct {
	mu  sync.Mutex
	ids []int64
}

const maxSkipped = 1000

func (s *skipSet) add(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, id)
	if len(s.ids) > maxSkipped {
		s.ids = s.ids[len(s.ids)-maxSkipped:]
	}
}

func (s *skipSet) list() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.ids...)
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
