package fleet

import (
	"sync"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// Written counts an outcome the worker wrote (worker.Config.Written), per
// minute, queue and class, for the history table; with the run's times
// (Ran) it adds them to the runtimes and waits and lists the job among
// the recent ones.
func (c *Counts) Written(job jobqueue.JobRow, o jobqueue.Outcome) {
	if o == jobqueue.OutcomeReturned {
		c.mu.Lock()
		delete(c.pending, job.ID)
		c.mu.Unlock()
		return // not run here: PHP's to count
	}
	c.add(job, o)
}

// Ran notes when a job's run started and how long it took
// (worker.Config.Ran), until Written says how its outcome was written.
func (c *Counts) Ran(job jobqueue.JobRow, started time.Time, took time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[job.ID] = ranJob{started: started, took: took}
}

// ranJob is a run whose outcome is being written.
type ranJob struct {
	started time.Time
	took    time.Duration
}

// pendingKeep bounds how long a run waits for its outcome's write: one
// never written (lost to another worker, or dropped) is forgotten then.
const pendingKeep = time.Hour

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
	mu      sync.Mutex
	now     func() time.Time
	m       map[countKey]*HistoryRow
	pairs   map[[2]string]bool
	pending map[int64]ranJob
	recent  recentRing
}

// NewCounts starts empty; now is the clock (nil: time.Now).
func NewCounts(now func() time.Time) *Counts {
	if now == nil {
		now = time.Now
	}
	return &Counts{now: now, m: map[countKey]*HistoryRow{}, pairs: map[[2]string]bool{}, pending: map[int64]ranJob{}}
}

func (c *Counts) add(job jobqueue.JobRow, o jobqueue.Outcome) {
	class, ok := ClassOf(job.Payload)
	if !ok {
		class = "unknown"
	}
	name := class // the recent jobs name it even past maxClasses
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
	outcome := OutcomeDone
	switch o {
	case jobqueue.OutcomeDone:
		r.Done++
	case jobqueue.OutcomeFailed:
		r.Failed++
		outcome = OutcomeFailed
	case jobqueue.OutcomeReleased:
		r.Released++
		outcome = OutcomeReleased
	}
	run, ok := c.pending[job.ID]
	if !ok {
		return
	}
	delete(c.pending, job.ID)
	// available_at is in whole seconds: a wait reads up to a second long.
	wait := max(run.started.Sub(time.Unix(job.AvailableAt, 0)), 0)
	r.Run.Observe(run.took)
	r.Wait.Observe(wait)
	c.recent.push(RecentJob{JobID: job.ID, UUID: UUIDOf(job.Payload), Queue: job.Queue, Class: name, Outcome: outcome,
		Attempt: int64(job.Attempts), FinishedAt: run.started.Add(run.took).Unix(), RunMS: run.took.Milliseconds(), WaitMS: wait.Milliseconds()})
}

// takeRecent returns the recent jobs not written yet and forgets the runs
// whose outcome never came (see pendingKeep).
func (c *Counts) takeRecent() []RecentJob {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.now().Add(-pendingKeep)
	for id, r := range c.pending {
		if r.started.Before(old) {
			delete(c.pending, id)
		}
	}
	return c.recent.take()
}

func (c *Counts) putBackRecent(jobs []RecentJob) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recent.putBack(jobs)
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
			cur.Run.Add(r.Run)
			cur.Wait.Add(r.Wait)
		} else {
			rr := r
			c.m[k] = &rr
		}
	}
}
