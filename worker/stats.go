package worker

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/payload"
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

// Outcome is what became of a job, once its write landed.
type Outcome int

const (
	OutcomeDone     Outcome = iota // deleted (ran, or was skipped as Laravel would)
	OutcomeFailed                  // moved to the failed jobs
	OutcomeReleased                // put back to run again
	OutcomeReturned                // given back untouched: not this worker's to run
)

// outcomeOf is the Outcome a verdict's write records.
func outcomeOf(v verdict) (Outcome, bool) {
	switch v {
	case verdictDelete:
		return OutcomeDone, true
	case verdictFail:
		return OutcomeFailed, true
	case verdictRelease:
		return OutcomeReleased, true
	case verdictUnreserve:
		return OutcomeReturned, true
	}
	return 0, false
}

// Stats is a snapshot of what a worker did and does.
type Stats struct {
	Name    string
	Queues  []string
	Started time.Time // zero before Run
	// Claimed counts reservations; each ended as one of Done (deleted),
	// Failed, Released (put back to run again, including jobs cut short at
	// shutdown), Returned (given back untouched, not Go's to run), Lost
	// (its reservation was taken by another worker, which runs the job
	// now: this outcome was not written) or Dropped (its outcome could not
	// be written before the write deadline at shutdown: the job comes back
	// after retry_after), or is Running or being written.
	Claimed, Done, Failed, Released, Returned, Lost, Dropped int64
	Running                                                  []RunningJob
	Paused                                                   bool
	PausedQueues                                             []string

	// Interrupted counts the jobs a stop signal cut short (still running
	// when Grace ended), which are also in Released: put back with their
	// attempt restored, or counted when cut short too many times in a row
	// (see Config.Grace).
	Interrupted int64

	// Loops counts the iterations of the claim loop: each one claims, or
	// (paused, or with every slot busy) waits and checks the stop
	// conditions. Two more than a moment ago means a whole iteration began
	// after it: what a paused worker did not claim since, it will not
	// claim without a change.
	Loops int64
}

// RunningJob is a job a worker holds now.
type RunningJob struct {
	ID      int64
	UUID    string
	Class   string
	Queue   string
	Attempt int
	Since   time.Time
}

// Stats returns a snapshot; it is safe to call while Run runs.
func (w *Worker) Stats() Stats {
	s := Stats{
		Name: w.cfg.Name, Queues: slices.Clone(w.cfg.Queues),
		Claimed: w.stats.claimed.Load(), Done: w.stats.done.Load(), Failed: w.stats.failed.Load(),
		Released: w.stats.released.Load(), Returned: w.stats.unreserved.Load(),
		Lost: w.stats.lost.Load(), Dropped: w.stats.dropped.Load(), Interrupted: w.stats.interrupted.Load(), Loops: w.stats.loops.Load(),
		Paused: w.paused.Load(),
	}
	if ns := w.stats.started.Load(); ns != 0 {
		s.Started = time.Unix(0, ns)
	}
	if p := w.pausedQueues.Load(); p != nil {
		s.PausedQueues = slices.Clone(*p)
	}
	for _, e := range w.inflight.all() {
		row := e.current()
		job := RunningJob{ID: row.ID, Queue: row.Queue, Attempt: row.Attempts, Since: e.started}
		p := e.parsedPayload()
		if p == nil {
			p, _ = payload.Parse(row.Payload) // not parsed yet (or not valid: nil)
		}
		if p != nil {
			job.UUID, job.Class = p.UUID, p.Name()
		}
		s.Running = append(s.Running, job)
	}
	slices.SortFunc(s.Running, func(a, b RunningJob) int { return a.Since.Compare(b.Since) })
	return s
}
