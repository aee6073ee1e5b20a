package worker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
)

// completer writes outcomes to the store. Successful jobs' deletes are
// grouped (below); in --laravel-exact mode each is written on its own.
// Releases, failures and other single writes are written by the job's
// own goroutine, which waits for them. Every write is retried
// until the store takes it, so an outcome decided while the database is
// down is written once it is back; after the worker stops, only until the
// write deadline (giveUpAt), then it is dropped and counted.
//
// A write the store refuses because the job's reservation was lost
// (another worker reclaimed the job after retry_after) is not retried:
// the outcome is dropped, logged once and counted.
type completer struct {
	completerDeps
	// deletes queues successful jobs for the grouped delete.
	deletes chan jobqueue.JobRow
	done    chan struct{}

	// writeCtx is every write's context; cancelled at the write deadline.
	writeCtx   context.Context
	giveUp     context.CancelFunc
	giveUpOnce sync.Once
	// stopping is closed when a write deadline is set: retries then come
	// faster (and one waiting wakes up), so a database that is back lands
	// the writes before the deadline.
	stopping chan struct{}
}

// completerDeps is what a completer is built from: it knows nothing of
// the worker that feeds it.
type completerDeps struct {
	store   jobqueue.Store
	log     zerolog.Logger
	metrics *Metrics
	// clock times the retries and the write deadline.
	clock clock.Clock
	// stats receives the outcomes written, lost and dropped.
	stats *counters
	// written, when set, hears of every outcome written.
	written func(jobqueue.JobRow, jobqueue.Outcome)
	// group turns successful jobs' deletes into grouped Deletes.
	group bool
	// setupProblem reports an error the app's setup causes (and logs it
	// once a minute); it says whether err was one.
	setupProblem func(err error) bool
}

func newCompleter(deps completerDeps) *completer {
	ctx, cancel := context.WithCancel(context.Background())
	return &completer{
		completerDeps: deps, deletes: make(chan jobqueue.JobRow, deleteBatchMax), done: make(chan struct{}),
		writeCtx: ctx, giveUp: cancel, stopping: make(chan struct{}),
	}
}

func (c *completer) start() <-chan struct{} {
	go c.loop()
	return c.done
}

// stop flushes pending deletes; call after every job has settled.
func (c *completer) stop() { close(c.deletes) }

// giveUpAt sets the write deadline (the first call wins): writes still
// failing then are dropped, and a write in flight is cancelled.
func (c *completer) giveUpAt(deadline time.Time) {
	c.giveUpOnce.Do(func() {
		close(c.stopping)
		c.clock.AfterFunc(deadline.Sub(c.clock.Now()), c.giveUp)
	})
}

// finish removes a finished job with its followup (chain link, batch).
func (c *completer) finish(row jobqueue.JobRow, f jobqueue.Followup) {
	res := c.persist("finish", 1, func(ctx context.Context) error { return c.store.Finish(ctx, row, f) })
	c.record(res, verdictDelete, "finish", row)
}

// release puts a job back with a delay.
func (c *completer) release(row jobqueue.JobRow, delay time.Duration) {
	res := c.persist("release", 1, func(ctx context.Context) error { return c.store.Release(ctx, row, delay) })
	c.record(res, verdictRelease, "release", row)
}

// fail moves a job to the failed jobs. A payload without a uuid (or one
// that is not JSON) gets a fresh uuid so it is still recorded. batch, when
// set, gives the batch entry to record with the failure; it is asked
// again on every try, so a batch read that fails is retried with the
// write instead of losing the batch's failure. hooks, when set, are the
// bridge's hook jobs written with the failure.
func (c *completer) fail(row jobqueue.JobRow, p *payload.Payload, exception string, batch func(context.Context) (*jobqueue.BatchEntry, error), hooks *jobqueue.Hooks) {
	uuid := ""
	if p != nil {
		uuid = p.UUID
	}
	if uuid == "" {
		uuid, _ = payload.NewUUID()
	}
	res := c.persist("fail", 1, func(ctx context.Context) error {
		f := jobqueue.Followup{Hooks: hooks}
		if batch != nil {
			var err error
			if f.Batch, err = batch(ctx); err != nil {
				return err
			}
		}
		return c.store.Fail(ctx, row, uuid, exception, f)
	})
	c.record(res, verdictFail, "fail", row)
}

// unreserve gives a job back untouched (attempts and reservation as before
// the claim), for jobs Go must leave to PHP.
func (c *completer) unreserve(row jobqueue.JobRow) {
	res := c.writeUnreserve(row)
	c.record(res, verdictUnreserve, "unreserve", row)
}

// writeUnreserve restores row as it was before its claim (attempt not
// counted), for unreserve, restore and giveBack to record as each does.
func (c *completer) writeUnreserve(row jobqueue.JobRow) writeResult {
	return c.persist("unreserve", 1, func(ctx context.Context) error { return c.store.Unreserve(ctx, row) })
}

// giveBack restores a job claimed ahead that never ran (claimahead.go):
// as unreserve, but not counted, since it was never counted as claimed.
func (c *completer) giveBack(row jobqueue.JobRow) {
	res := c.writeUnreserve(row)
	if res.lost {
		c.log.Warn().Int64("id", row.ID).Str("queue", row.Queue).
			Msg("a job claimed ahead was taken by another worker before it was given back")
	}
}

// restore gives back a job that shutdown cut short as it was before the
// claim (attempt not counted). It counts as released: put back to run
// again, which it is.
func (c *completer) restore(row jobqueue.JobRow) {
	res := c.writeUnreserve(row)
	c.record(res, verdictRelease, "unreserve", row)
}

// record counts a single job's write.
func (c *completer) record(res writeResult, v verdict, op string, row jobqueue.JobRow) {
	switch {
	case res.lost:
		c.reservationLost(op, row, res.retried)
	case !res.dropped:
		c.stats.count(v)
		if o, ok := outcomeOf(v); ok && c.written != nil {
			c.written(row, o)
		}
	}
}

// writeResult is how a write ended: written, refused because the
// reservation was lost, or dropped at the write deadline.
type writeResult struct {
	lost, dropped bool
	// retried: an earlier try failed, and may have committed unseen (a
	// connection lost during COMMIT); then a "lost" answer may be this
	// worker's own earlier write.
	retried bool
}

// persist runs op until it succeeds or the store says the reservation was
// lost. Other errors are retried with capped backoff, forever while the
// worker runs (the database may be restarting); after the write deadline
// the write is dropped and the jobs it carried are counted as dropped
// (each comes back after retry_after, as after a crash).
func (c *completer) persist(what string, jobs int, op func(ctx context.Context) error) writeResult {
	ctx := c.writeCtx
	delay := 100 * time.Millisecond
	// stopping wakes one wait when the worker stops, then is nil (a nil
	// channel never fires); a write that starts after the stop waits as
	// usual.
	stopping := c.stopping
	select {
	case <-stopping:
		stopping = nil
	default:
	}
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		res := writeResult{retried: attempt > 1}
		switch {
		case err == nil:
			if attempt > 1 {
				c.log.Info().Str("op", what).Int("attempts", attempt).Msg("database write succeeded after retries")
			}
			return res
		case errors.Is(err, jobqueue.ErrReservationLost):
			res.lost = true
			return res
		case ctx.Err() != nil:
			c.stats.dropped.Add(int64(jobs))
			c.metrics.outcomesDropped(what, jobs)
			c.log.Error().Err(err).Str("op", what).Int("jobs", jobs).
				Msg("write deadline passed: outcome dropped; the job comes back after retry_after and runs again")
			res.dropped = true
			return res
		}
		c.metrics.writeError(what)
		if c.setupProblem == nil || !c.setupProblem(err) {
			c.log.Error().Err(err).Str("op", what).Int("attempt", attempt).Msg("database write failed; retrying")
		}
		t := c.clock.NewTimer(delay)
		select {
		case <-ctx.Done():
		case <-stopping:
			stopping = nil
		case <-t.C():
		}
		t.Stop()
		delay = min(delay*2, c.maxRetryDelay())
	}
}

// maxRetryDelay caps the backoff between tries of a write: 5 s while the
// worker runs, 1 s once it stops and the write deadline nears.
func (c *completer) maxRetryDelay() time.Duration {
	select {
	case <-c.stopping:
		return time.Second
	default:
		return 5 * time.Second
	}
}

// reservationLost logs and counts an outcome dropped because another
// worker holds the job now.
func (c *completer) reservationLost(op string, row jobqueue.JobRow, retried bool) {
	c.stats.lost.Add(1)
	c.metrics.reservationLost(op)
	ev := c.log.Warn().Str("op", op).Int64("id", row.ID).Str("queue", row.Queue).Int("attempt", row.Attempts)
	if p, err := payload.Parse(row.Payload); err == nil {
		ev = ev.Str("uuid", p.UUID).Str("class", p.Name())
	}
	if retried {
		ev = ev.Bool("unconfirmed", true).Str("note", "an earlier try of this write failed and may have committed it")
	}
	ev.Msg("reservation lost: another worker took the job after retry_after; this outcome is dropped")
}

// Grouped deletes. The completer keeps one Delete in flight at a time,
// and starts one at most every deleteSpacing: successful jobs finishing
// meanwhile queue up and go out together in the next one. Batches are
// thus sized by load: a job finishing when no delete went out for
// deleteSpacing is deleted at once (an idle worker never waits), while a
// busy worker's batch holds what finished since the previous one, up to
// deleteBatchMax.
const (
	// deleteBatchMax caps a batch: one statement on every engine (MySQL
	// and SQLite take at most 500 ids a statement).
	deleteBatchMax = 500
	// deleteSpacing is the least time between two deletes' starts: a
	// busy worker writes at most 200 deletes a second whatever its
	// concurrency. Longer would save little more (at c128 the claims
	// commit far more often than the deletes) and would leave more
	// finished rows reserved in the table, which every claim scans past
	// (and a crash runs again).
	deleteSpacing = 5 * time.Millisecond
)

// delete removes a finished job.
func (c *completer) delete(row jobqueue.JobRow) {
	if !c.group {
		c.flush([]jobqueue.JobRow{row})
		return
	}
	c.deletes <- row
}

// loop writes the queued deletes, one batch at a time, until stop. The
// spacing between deletes runs on real time, whatever the clock: it paces
// the database's work, and a test's fake time must not hold deletes back.
func (c *completer) loop() {
	defer close(c.done)
	defer c.giveUp() // releases the context's resources
	batch := make([]jobqueue.JobRow, 0, deleteBatchMax)
	spacing := time.NewTimer(time.Hour)
	spacing.Stop()
	var last time.Time // when the previous delete started
	for {
		row, ok := <-c.deletes
		if !ok {
			return
		}
		batch = append(batch[:0], row)
		// Nothing queued behind it (an idle worker's one job): no gather.
		// A closed queue is then seen at the next receive.
		open := len(c.deletes) == 0 || c.gather(&batch)
		if wait := deleteSpacing - time.Since(last); open && wait > 0 && len(batch) < deleteBatchMax {
			spacing.Reset(wait)
			open = c.gatherUntil(&batch, spacing.C)
			spacing.Stop()
		}
		last = time.Now()
		c.flush(batch)
		if !open {
			return
		}
	}
}

// gather adds the deletes already queued to batch, up to deleteBatchMax;
// false when the queue is closed (stop).
func (c *completer) gather(batch *[]jobqueue.JobRow) (open bool) {
	for len(*batch) < deleteBatchMax {
		select {
		case row, ok := <-c.deletes:
			if !ok {
				return false
			}
			*batch = append(*batch, row)
		default:
			return true
		}
	}
	return true
}

// gatherUntil adds deletes to batch as they come until deadline fires or
// the batch is full; false when the queue is closed (stop).
func (c *completer) gatherUntil(batch *[]jobqueue.JobRow, deadline <-chan time.Time) (open bool) {
	for len(*batch) < deleteBatchMax {
		select {
		case row, ok := <-c.deletes:
			if !ok {
				return false
			}
			*batch = append(*batch, row)
		case <-deadline:
			return true
		}
	}
	return true
}

// flush deletes rows, retrying until written (or the write deadline), and
// counts each job done or lost.
func (c *completer) flush(rows []jobqueue.JobRow) {
	if len(rows) == 0 {
		return
	}
	var lost []jobqueue.JobRow
	res := c.persist("delete", len(rows), func(ctx context.Context) (err error) {
		lost, err = c.store.Delete(ctx, rows)
		return err
	})
	if res.dropped {
		return
	}
	c.stats.done.Add(int64(len(rows) - len(lost)))
	var lostIDs map[int64]bool
	if len(lost) > 0 {
		lostIDs = make(map[int64]bool, len(lost))
		for _, row := range lost {
			lostIDs[row.ID] = true
			c.reservationLost("delete", row, res.retried)
		}
	}
	if c.written != nil {
		for _, row := range rows {
			if !lostIDs[row.ID] {
				c.written(row, jobqueue.OutcomeDone)
			}
		}
	}
}
