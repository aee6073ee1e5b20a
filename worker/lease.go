package worker

import (
	"context"
	"time"
)

// startLease refreshes the reservations of jobs running longer than
// LeaseEvery (a third of retry_after by default), in one write per tick,
// so no worker, Go or PHP, takes a job that is still running (Laravel's
// issue #52493). A crashed worker refreshes nothing, so its jobs come back
// after retry_after, as in Laravel.
func (w *Worker) startLease(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	every := w.leaseEvery()
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

// leaseEvery is LeaseEvery, else a third of retry_after, at least a second.
func (w *Worker) leaseEvery() time.Duration {
	every := w.cfg.LeaseEvery
	if every <= 0 {
		every = w.store.RetryAfter() / 3
	}
	return max(every, time.Second)
}

func (w *Worker) extendLeases(ctx context.Context, every time.Duration) {
	rows := w.running.olderThan(every, w.now())
	if len(rows) == 0 {
		return
	}
	if err := w.store.Extend(ctx, rows); err != nil && ctx.Err() == nil {
		w.log.Error().Err(err).Int("jobs", len(rows)).Msg("refreshing reservations failed")
		return
	}
	w.cfg.Metrics.leasesExtended(len(rows))
}
