package worker

import (
	"context"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// Claiming ahead. A producer that claims only as many jobs as places are
// free settles, with fast jobs, at claims of half its concurrency: it
// claims again while the jobs it just dispatched still hold their
// places. So a claim may also take as many jobs as left their places
// while the previous claim ran (the jobs that are fast against a claim's
// round trips); those wait here, in claim order, and take the next free
// places before anything is claimed again. Slow jobs leave no place during
// a claim, so their workers never claim ahead. A producer that claims
// with nothing running (always, at concurrency 1) sees no job leave
// during its claim: it counts instead the jobs that left since its
// previous claim after running for less than a claim takes, so fast jobs
// at concurrency 1 are claimed two at a time and the second runs while
// no claim is waited for. A job that waits longer
// than maxAheadHold (a job ahead of it turned out slow) is given back as
// it was before the claim, attempt not counted, as is every waiting job
// when the worker pauses or stops: a held job never starts late into its
// reservation and never counts as claimed until it runs.

// maxAheadHold is how long a job claimed ahead may wait for a place.
const maxAheadHold = time.Second

// heldJob is a job claimed ahead, and when it was claimed.
type heldJob struct {
	row jobqueue.JobRow
	at  time.Time
}

// claimAhead is the producer's own state (one goroutine: no lock).
type claimAhead struct {
	held []heldJob
	// next is how many jobs the next claim may take beyond the free
	// places: how many left their places while the last full claim ran.
	next int
	// fastMark is the inFlight's fastCount when the last claim began.
	fastMark int64
	// fixed, when above 0, replaces next; hold, when above 0, replaces
	// maxAheadHold (tests).
	fixed int
	hold  time.Duration
}

// maxHold is how long a held job may wait for a place: maxAheadHold, or
// a quarter of retry_after when that is shorter, so a held job is given
// back long before another worker could take it again.
func (w *Worker) maxHold() time.Duration {
	if w.ahead.hold > 0 {
		return w.ahead.hold
	}
	return min(maxAheadHold, w.store.RetryAfter()/4)
}

// claimSize is the free places plus what may be claimed ahead, never more
// than the concurrency ahead.
func (w *Worker) claimSize(free int) int {
	if w.cfg.Once || w.cfg.MaxJobs != 0 || w.cfg.LaravelExact {
		return free // they claim exactly what they may run
	}
	ahead := w.ahead.next
	if w.ahead.fixed > 0 {
		ahead = w.ahead.fixed
	}
	return free + min(ahead, w.cfg.Concurrency)
}

// claimAndDispatch claims up to the free places and what may be claimed
// ahead, dispatches the jobs that have a place and holds the rest; idle
// says that no job was running when the claim began.
func (w *Worker) claimAndDispatch(ctx, jobCtx context.Context, free int, idle bool) ([]jobqueue.JobRow, error) {
	n := w.claimSize(free)
	leftBefore, fastBefore := w.inflight.leftTotal.Load(), w.inflight.fastTotal.Load()
	fastSincePrevious := fastBefore - w.ahead.fastMark
	w.ahead.fastMark = fastBefore
	began := time.Now()
	jobs, err := w.claim(ctx, n)
	if err != nil {
		return nil, err
	}
	w.inflight.fastUnder.Store(int64(time.Since(began)))
	if len(jobs) > 0 && w.narrow.counted {
		w.narrow.busy() // all threads back before the first job runs
	}
	w.ahead.next = 0
	if len(jobs) == n {
		// A full claim: the queue has more. Fast jobs freed this many
		// places while it ran; the next claim may take as many ahead.
		w.ahead.next = int(w.inflight.leftTotal.Load() - leftBefore)
		if idle {
			// Nothing ran during the claim to leave: the jobs of the
			// previous claim that were faster than a claim tell instead.
			w.ahead.next = max(w.ahead.next, int(fastSincePrevious))
		}
	}
	now := time.Now()
	for i, row := range jobs {
		if i < free {
			w.dispatch(jobCtx, row)
		} else {
			w.ahead.held = append(w.ahead.held, heldJob{row: row, at: now})
		}
	}
	if len(w.ahead.held) > 0 {
		w.dispatchHeld(ctx, jobCtx)
	}
	return jobs, nil
}

// dispatchHeld gives the held jobs, oldest first, the places free now;
// none after a stop (ctx ended), even if a place freed as it came: Run
// gives them back.
func (w *Worker) dispatchHeld(ctx, jobCtx context.Context) {
	if ctx.Err() != nil {
		return
	}
	n := min(len(w.ahead.held), w.inflight.free())
	for _, h := range w.ahead.held[:n] {
		w.dispatch(jobCtx, h.row)
	}
	w.ahead.held = w.ahead.held[n:]
	if len(w.ahead.held) == 0 {
		w.ahead.held = nil
	}
}

// holdDeadline is when the oldest held job has waited too long; the
// caller checked that a job is held.
func (w *Worker) holdDeadline() time.Time {
	return w.ahead.held[0].at.Add(w.maxHold())
}

// giveBackStale gives back the held jobs that waited too long.
func (w *Worker) giveBackStale() {
	if len(w.ahead.held) == 0 {
		return
	}
	cut := time.Now().Add(-w.maxHold())
	n := 0
	for n < len(w.ahead.held) && !w.ahead.held[n].at.After(cut) {
		n++
	}
	if n == 0 {
		return
	}
	w.giveBack(w.ahead.held[:n], "waited too long for a place")
	w.ahead.held = w.ahead.held[n:]
}

// giveBackHeld gives back every held job (pause, stop).
func (w *Worker) giveBackHeld(why string) {
	w.giveBack(w.ahead.held, why)
	w.ahead.held = nil
	w.ahead.next = 0
}

// giveBack restores held jobs as they were before the claim. They never
// ran and were never counted as claimed, so nothing is counted.
func (w *Worker) giveBack(held []heldJob, why string) {
	if len(held) == 0 {
		return
	}
	w.log.Debug().Int("jobs", len(held)).Str("why", why).Msg("giving back jobs claimed ahead")
	for _, h := range held {
		w.completer.giveBack(h.row)
	}
}
