package worker

import (
	"context"
	"time"

	"github.com/laraworker/laraworker/laravel"
	"github.com/laraworker/laraworker/payload"
	"github.com/rs/zerolog"
)

// completer writes outcomes to the store. Successful jobs' deletes are
// grouped into one Delete per batch window (River's completer); in
// --laravel-exact mode each is written on its own. Every write is retried
// until the store takes it, so an outcome decided while the database is
// down is written once it is back.
type completer struct {
	completerDeps
	deletes chan laravel.JobRow
	done    chan struct{}
}

// completerDeps is what a completer is built from: it knows nothing of
// the worker that feeds it.
type completerDeps struct {
	store   Store
	log     zerolog.Logger
	metrics *Metrics
	// stopping reports whether the worker was told to stop: writes then
	// give up after persistGiveUp.
	stopping func() bool
	// group turns successful jobs' deletes into grouped Deletes.
	group bool
	// setupProblem reports an error the app's setup causes (and logs it
	// once a minute); it says whether err was one.
	setupProblem func(err error) bool
}

const (
	deleteBatchMax    = 512
	deleteBatchWindow = 2 * time.Millisecond
	// persistGiveUp bounds retries after the worker was told to stop.
	persistGiveUp = 30 * time.Second
)

func newCompleter(deps completerDeps) *completer {
	return &completer{completerDeps: deps, deletes: make(chan laravel.JobRow, deleteBatchMax), done: make(chan struct{})}
}

func (c *completer) start() <-chan struct{} {
	go c.loop()
	return c.done
}

// stop flushes pending deletes; call after every job has settled.
func (c *completer) stop() { close(c.deletes) }

func (c *completer) loop() {
	defer close(c.done)
	batch := make([]laravel.JobRow, 0, deleteBatchMax)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case row, ok := <-c.deletes:
			if !ok {
				c.flush(batch)
				return
			}
			if len(batch) == 0 {
				timer.Reset(deleteBatchWindow)
			}
			batch = append(batch, row)
			if len(batch) >= deleteBatchMax {
				c.flush(batch)
				batch = batch[:0]
			}
		case <-timer.C:
			c.flush(batch)
			batch = batch[:0]
		}
	}
}

func (c *completer) flush(rows []laravel.JobRow) {
	if len(rows) == 0 {
		return
	}
	c.persist("delete", func(ctx context.Context) error { return c.store.Delete(ctx, rows) })
}

// delete removes a finished job.
func (c *completer) delete(row laravel.JobRow) {
	if !c.group {
		c.flush([]laravel.JobRow{row})
		return
	}
	c.deletes <- row
}

// release puts a job back with a delay.
func (c *completer) release(row laravel.JobRow, delay time.Duration) {
	c.persist("release", func(ctx context.Context) error { return c.store.Release(ctx, row, delay) })
}

// fail moves a job to the failed jobs. A payload without a uuid (or one
// that is not JSON) gets a fresh uuid so it is still recorded.
func (c *completer) fail(row laravel.JobRow, p *payload.Payload, exception string) {
	uuid := ""
	if p != nil {
		uuid = p.UUID
	}
	if uuid == "" {
		uuid, _ = payload.NewUUID()
	}
	c.persist("fail", func(ctx context.Context) error { return c.store.Fail(ctx, row, uuid, exception) })
}

// unreserve gives a job back untouched (attempts and reservation as before
// the claim), for jobs Go must leave to PHP.
func (c *completer) unreserve(row laravel.JobRow) {
	c.persist("unreserve", func(ctx context.Context) error { return c.store.Unreserve(ctx, row) })
}

// push adds a job (a chain's next link).
func (c *completer) push(item laravel.PushItem) {
	c.persist("push-chain", func(ctx context.Context) error {
		_, err := c.store.Push(ctx, item)
		return err
	})
}

// persist runs op until it succeeds. While the worker runs it retries
// forever with capped backoff (the database may be restarting); once it is
// stopping, it gives up after persistGiveUp and logs the lost write (the
// row then comes back after retry_after, as after a crash).
func (c *completer) persist(what string, op func(ctx context.Context) error) {
	ctx := context.Background()
	delay := 100 * time.Millisecond
	var stopSince time.Time
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil {
			if attempt > 1 {
				c.log.Info().Str("op", what).Int("attempts", attempt).Msg("database write succeeded after retries")
			}
			return
		}
		c.metrics.writeError(what)
		if c.setupProblem == nil || !c.setupProblem(err) {
			c.log.Error().Err(err).Str("op", what).Int("attempt", attempt).Msg("database write failed; retrying")
		}
		if c.stopping() {
			if stopSince.IsZero() {
				stopSince = time.Now()
			} else if time.Since(stopSince) > persistGiveUp {
				c.log.Error().Str("op", what).Msg("giving up on a database write at shutdown; the job comes back after retry_after")
				return
			}
		}
		time.Sleep(delay)
		delay = min(delay*2, 5*time.Second)
	}
}
