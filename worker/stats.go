package worker

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
)

// counters are the worker's running totals.
type counters struct {
	started    atomic.Int64 // UnixNano of Run's start
	claimed    atomic.Int64
	done       atomic.Int64
	failed     atomic.Int64
	released   atomic.Int64
	unreserved atomic.Int64
	lost       atomic.Int64 // outcomes dropped: another worker held the job
	dropped    atomic.Int64 // outcomes dropped: not written by the write deadline

	// interrupted: jobs cut short by shutdown (also counted as released)
	interrupted atomic.Int64
	// loops: iterations of the claim loop
	loops atomic.Int64
	// configProblems: configuration problems reported (each held jobs
	// back: given back to PHP, or not claimed)
	configProblems atomic.Int64
}

// count adds one written outcome to its total.
func (c *counters) count(v verdict) {
	switch v {
	case verdictDelete:
		c.done.Add(1)
	case verdictRelease:
		c.released.Add(1)
	case verdictFail:
		c.failed.Add(1)
	case verdictUnreserve:
		c.unreserved.Add(1)
	}
}

// outcomeOf is the Outcome a verdict's write records.
func outcomeOf(v verdict) (jobqueue.Outcome, bool) {
	switch v {
	case verdictDelete:
		return jobqueue.OutcomeDone, true
	case verdictFail:
		return jobqueue.OutcomeFailed, true
	case verdictRelease:
		return jobqueue.OutcomeReleased, true
	case verdictUnreserve:
		return jobqueue.OutcomeReturned, true
	}
	return 0, false
}

// Stats returns a snapshot; it is safe to call while Run runs.
func (w *Worker) Stats() jobqueue.WorkerStats {
	s := jobqueue.WorkerStats{
		Name: w.cfg.Name, Queues: slices.Clone(w.cfg.Queues),
		Claimed: w.stats.claimed.Load(), Done: w.stats.done.Load(), Failed: w.stats.failed.Load(),
		Released: w.stats.released.Load(), Returned: w.stats.unreserved.Load(),
		Lost: w.stats.lost.Load(), Dropped: w.stats.dropped.Load(), Interrupted: w.stats.interrupted.Load(), Loops: w.stats.loops.Load(),
		ConfigProblems: w.stats.configProblems.Load(),
		Paused:         w.paused.Load(),
	}
	if ns := w.stats.started.Load(); ns != 0 {
		s.Started = time.Unix(0, ns)
	}
	if p := w.pausedQueues.Load(); p != nil {
		s.PausedQueues = slices.Clone(*p)
	}
	if p := w.lpause.published.Load(); p != nil {
		s.LaravelPausedQueues = slices.Clone(*p)
	}
	for _, e := range w.inflight.all() {
		row := e.current()
		job := jobqueue.RunningJob{ID: row.ID, Queue: row.Queue, Attempt: row.Attempts, Since: e.started}
		p := e.parsedPayload()
		if p == nil {
			p, _ = payload.Parse(row.Payload) // not parsed yet (or not valid: nil)
		}
		if p != nil {
			job.UUID, job.Class = p.UUID, p.Name()
		}
		s.Running = append(s.Running, job)
	}
	slices.SortFunc(s.Running, func(a, b jobqueue.RunningJob) int { return a.Since.Compare(b.Since) })
	return s
}
