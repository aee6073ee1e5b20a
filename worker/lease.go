package worker

import (
	"context"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// startLease refreshes the reservations of jobs running longer than
// LeaseEvery (a third of retry_after by default), in one write per tick,
// so no worker, Go or PHP, takes a job that is still running (Laravel's
// issue #52493). A crashed worker refreshes nothing, so its jobs come back
// after retry_after, as in Laravel.
func (w *Worker) startLease(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	every := w.leaseEvery()
	t := w.clock.NewTicker(every)
	go func() {
		defer close(done)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
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

// extendLeases refreshes the reservations of the jobs running for at
// least every. It holds each job's lock across the write, so an outcome
// settled meanwhile waits and is written with the new token. A job whose
// reservation turns out taken by another worker is marked lost: its
// handler's context is cancelled (the job runs elsewhere now) and its
// outcome will be dropped.
func (w *Worker) extendLeases(ctx context.Context, every time.Duration) {
	held := lockUnsettled(w.inflight.olderThan(every, w.clock.Now()))
	if len(held) == 0 {
		return
	}
	rows := make([]jobqueue.JobRow, len(held))
	for i, e := range held {
		rows[i] = e.row
	}
	// A refresh that takes longer than the lease period is useless.
	extendCtx, cancel := context.WithTimeout(ctx, every)
	refreshed, err := w.store.Extend(extendCtx, rows)
	cancel()
	tokens := make(map[int64]*int64, len(refreshed))
	for _, row := range refreshed {
		tokens[row.ID] = row.ReservedAt
	}
	var lost []*jobExecutor
	for _, e := range held {
		if tok, ok := tokens[e.row.ID]; ok {
			e.row.ReservedAt = tok
		} else if err == nil {
			e.lost = true
			lost = append(lost, e)
		}
		e.mu.Unlock()
	}
	for _, e := range lost {
		w.completer.reservationLost("extend", e.row, false)
		e.cancel(errReservationLost)
	}
	if err != nil && ctx.Err() == nil {
		w.log.Error().Err(err).Int("jobs", len(rows)).Int("refreshed", len(refreshed)).Msg("refreshing reservations failed")
	}
	w.cfg.Metrics.leasesExtended(len(refreshed))
}

// lockUnsettled locks the jobs whose outcome is not written yet and
// returns them locked.
func lockUnsettled(es []*jobExecutor) []*jobExecutor {
	held := es[:0]
	for _, e := range es {
		e.mu.Lock()
		if e.settled || e.lost {
			e.mu.Unlock()
			continue
		}
		held = append(held, e)
	}
	return held
}
