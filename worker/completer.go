package worker

import (
	"context"
	"time"

	"github.com/laraworker/laraworker/laravel"
	"github.com/laraworker/laraworker/payload"
)

// completer writes outcomes. Successful jobs' deletes are grouped into one
// `delete ... where id in (...)` per batch window (River's completer);
// --laravel-exact deletes each job in Laravel's own transaction instead.
// Every write is retried until the database takes it, so an outcome
// decided while the database is down is written once it is back.
type completer struct {
	w       *Worker
	deletes chan int64
	done    chan struct{}
}

const (
	deleteBatchMax    = 512
	deleteBatchWindow = 2 * time.Millisecond
	// persistGiveUp bounds retries after the worker was told to stop.
	persistGiveUp = 30 * time.Second
)

func newCompleter(w *Worker) *completer {
	return &completer{w: w, deletes: make(chan int64, deleteBatchMax), done: make(chan struct{})}
}

func (c *completer) start() <-chan struct{} {
	go c.loop()
	return c.done
}

// stop flushes pending deletes; call after every job has settled.
func (c *completer) stop() { close(c.deletes) }

func (c *completer) loop() {
	defer close(c.done)
	batch := make([]int64, 0, deleteBatchMax)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case id, ok := <-c.deletes:
			if !ok {
				c.flush(batch)
				return
			}
			if len(batch) == 0 {
				timer.Reset(deleteBatchWindow)
			}
			batch = append(batch, id)
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

func (c *completer) flush(ids []int64) {
	if len(ids) == 0 {
		return
	}
	c.persist("delete", func(ctx context.Context) error {
		_, err := c.w.q.DeleteMany(ctx, ids)
		return err
	})
}

// delete removes a finished job.
func (c *completer) delete(row laravel.JobRow) {
	if c.w.opts.LaravelExact {
		c.persist("delete", func(ctx context.Context) error {
			_, err := c.w.q.DeleteReserved(ctx, row.ID)
			return err
		})
		return
	}
	c.deletes <- row.ID
}

// release puts a job back with a delay (delete + insert, one transaction).
func (c *completer) release(row laravel.JobRow, delay time.Duration) {
	c.persist("release", func(ctx context.Context) error {
		_, err := c.w.q.Release(ctx, row, delay)
		return err
	})
}

// fail moves a job to failed_jobs in one transaction. A payload without a
// uuid (or one that is not JSON) gets a fresh uuid so it is still recorded.
func (c *completer) fail(row laravel.JobRow, p *payload.Payload, exception string) {
	uuid := ""
	if p != nil {
		uuid = p.UUID
	}
	if uuid == "" {
		uuid, _ = payload.NewUUID()
	}
	c.persist("fail", func(ctx context.Context) error {
		_, err := c.w.q.FailAs(ctx, row, uuid, exception)
		return err
	})
}

// unreserve gives a job back untouched (attempts and reservation as before
// the claim), for jobs Go must leave to PHP.
func (c *completer) unreserve(row laravel.JobRow) {
	c.w.skip.add(row.ID, c.w.now())
	c.persist("unreserve", func(ctx context.Context) error {
		_, err := c.w.q.Unreserve(ctx, row)
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
				c.w.log.Info().Str("op", what).Int("attempts", attempt).Msg("database write succeeded after retries")
			}
			return
		}
		c.w.metrics.writeError(what)
		c.w.log.Error().Err(err).Str("op", what).Int("attempt", attempt).Msg("database write failed; retrying")
		if c.w.stopping.Load() {
			if stopSince.IsZero() {
				stopSince = time.Now()
			} else if time.Since(stopSince) > persistGiveUp {
				c.w.log.Error().Str("op", what).Msg("giving up on a database write at shutdown; the job comes back after retry_after")
				return
			}
		}
		time.Sleep(delay)
		delay = min(delay*2, 5*time.Second)
	}
}
