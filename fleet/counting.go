package fleet

import (
	"sync"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/worker"
)

// Written counts an outcome the worker wrote (worker.Config.Written), per
// minute, queue and class, for the history table.
func (c *Counts) Written(job jobqueue.JobRow, o worker.Outcome) {
	if o == worker.OutcomeReturned {
		return // not run here: PHP's to count
	}
	c.add(job, o)
}

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

func (c *Counts) add(job jobqueue.JobRow, o worker.Outcome) {
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
	case worker.OutcomeDone:
		r.Done++
	case worker.OutcomeFailed:
		r.Failed++
	case worker.OutcomeReleased:
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
