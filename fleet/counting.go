package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/laraworker/laraworker/laravel"
	"github.com/laraworker/laraworker/worker"
)

// CountingStore is a worker.Store that counts the outcomes the worker
// writes, per minute, queue and class, for the history table. Only
// writes that succeeded are counted (the worker retries failed ones).
//
// It wraps the store, so optional interfaces the worker looks for on its
// store (Batches, the shared cache) are hidden: give them to the worker
// in its Config (Config.Batches, Config.Cache), as console's work does.
type CountingStore struct {
	worker.Store
	counts *Counts
}

// NewCountingStore counts the outcomes written through s into c.
func NewCountingStore(s worker.Store, c *Counts) *CountingStore {
	return &CountingStore{Store: s, counts: c}
}

// Delete counts each deleted job as done.
func (s *CountingStore) Delete(ctx context.Context, jobs []laravel.JobRow) error {
	err := s.Store.Delete(ctx, jobs)
	if err == nil {
		for _, j := range jobs {
			s.counts.add(j, outcomeDone)
		}
	}
	return err
}

// Release counts a released job.
func (s *CountingStore) Release(ctx context.Context, job laravel.JobRow, delay time.Duration) error {
	err := s.Store.Release(ctx, job, delay)
	if err == nil {
		s.counts.add(job, outcomeReleased)
	}
	return err
}

// Fail counts a failed job.
func (s *CountingStore) Fail(ctx context.Context, job laravel.JobRow, uuid, exception string) error {
	err := s.Store.Fail(ctx, job, uuid, exception)
	if err == nil {
		s.counts.add(job, outcomeFailed)
	}
	return err
}

type outcome int

const (
	outcomeDone outcome = iota
	outcomeFailed
	outcomeReleased
)

// maxClasses bounds the distinct (queue, class) pairs one process
// tracks: class names come from payloads, which whoever can write the
// jobs table controls. Past it, jobs count under class "other".
const maxClasses = 500

type countKey struct {
	minute       int64
	queue, class string
}

// Counts accumulates outcomes per minute, queue and class until a
// heartbeat takes them.
type Counts struct {
	mu    sync.Mutex
	now   func() time.Time
	m     map[countKey]*HistoryRow
	pairs map[[2]string]bool
}

// NewCounts starts empty; now is the clock (nil: time.Now).
func NewCounts(now func() time.Time) *Counts {
	if now == nil {
		now = time.Now
	}
	return &Counts{now: now, m: map[countKey]*HistoryRow{}, pairs: map[[2]string]bool{}}
}

func (c *Counts) add(job laravel.JobRow, o outcome) {
	class, ok := ClassOf(job.Payload)
	if !ok {
		class = "unknown"
	}
	minute := c.now().Unix() / 60 * 60
	c.mu.Lock()
	defer c.mu.Unlock()
	pair := [2]string{job.Queue, class}
	if !c.pairs[pair] {
		if len(c.pairs) >= maxClasses {
			class = "other"
			pair[1] = class
		}
		c.pairs[pair] = true
	}
	k := countKey{minute, job.Queue, class}
	r := c.m[k]
	if r == nil {
		r = &HistoryRow{Minute: minute, Queue: job.Queue, Class: class}
		c.m[k] = r
	}
	switch o {
	case outcomeDone:
		r.Done++
	case outcomeFailed:
		r.Failed++
	case outcomeReleased:
		r.Released++
	}
}

// take returns and forgets what was counted.
func (c *Counts) take() []HistoryRow {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]HistoryRow, 0, len(c.m))
	for _, r := range c.m {
		out = append(out, *r)
	}
	clear(c.m)
	return out
}

// putBack returns rows a failed write could not store, so the next
// heartbeat writes them; minutes older than the history keeps are
// dropped, which bounds what an unreachable database makes us hold.
func (c *Counts) putBack(rows []HistoryRow) {
	oldest := c.now().Add(-HistoryKeep).Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range rows {
		if r.Minute < oldest {
			continue
		}
		k := countKey{r.Minute, r.Queue, r.Class}
		if cur := c.m[k]; cur != nil {
			cur.Done += r.Done
			cur.Failed += r.Failed
			cur.Released += r.Released
		} else {
			rr := r
			c.m[k] = &rr
		}
	}
}
