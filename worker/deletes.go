package worker

import (
	"context"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

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

// loop writes the queued deletes, one batch at a time, until stop.
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
		open := c.gather(&batch)
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
				c.written(row, OutcomeDone)
			}
		}
	}
}
