package worker

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/worker/internal/bridgehooks"
	"github.com/laraworker/laraworker/worker/internal/configproblem"
	"github.com/laraworker/laraworker/worker/internal/phpexception"
)

// The producer: the daemon loop claims as many jobs as there are free
// places, dispatches each to an executor of its own, and checks the stop
// conditions after every claim; at the end it drains what still runs.

func (w *Worker) loop(ctx, jobCtx context.Context, start time.Time) StopReason {
	for {
		w.stats.loops.Add(1)
		if ctx.Err() != nil {
			return StopInterrupted
		}
		if len(w.ahead.held) > 0 {
			w.giveBackStale()
		}
		if w.paused.Load() {
			w.giveBackHeld("paused")
			// As Laravel: sleep at least a second while paused, and keep
			// checking the stop conditions.
			w.sleepOrWake(ctx, max(w.cfg.Sleep, time.Second))
			if w.cfg.BeforeClaim != nil {
				w.cfg.BeforeClaim(ctx) // it may resume the worker
			}
			if reason := w.stopReason(start, false, false); reason != "" {
				return reason
			}
			continue
		}
		free := w.waitForSlot(ctx)
		if free == 0 || w.paused.Load() {
			if reason := w.stopReason(start, false, false); reason != "" {
				return reason
			}
			continue
		}
		if len(w.ahead.held) > 0 {
			// Jobs claimed ahead take the free places before any claim.
			w.dispatchHeld(ctx, jobCtx)
			continue
		}
		if w.cfg.BeforeClaim != nil {
			if w.cfg.BeforeClaim(ctx); w.paused.Load() {
				continue
			}
		}
		idleBefore := w.inflight.held.Load() == 0
		jobs, err := w.claimAndDispatch(ctx, jobCtx, free, idleBefore)
		if errors.Is(err, errRowFailedAtClaim) {
			continue // a row was found (and failed): the queue is not empty
		}
		if err != nil {
			w.claimFailed(ctx, err)
			continue
		}
		// Empty means empty with nothing running since before the claim: a
		// job finishing meanwhile may have released itself back.
		empty := len(jobs) == 0 && idleBefore && w.inflight.held.Load() == 0 &&
			(!w.cfg.StopWhenEmpty || w.reallyEmpty(ctx))
		if reason := w.stopReason(start, len(jobs) > 0, empty); reason != "" {
			return reason
		}
		if len(jobs) == 0 {
			// A job finishing wakes the loop early: it may have been the
			// last one (--stop-when-empty) or released itself back.
			w.idleWait(ctx, w.lastQueues)
			continue
		}
		w.poll.found()
		if w.cfg.Rest > 0 {
			clock.Sleep(ctx, w.clock, w.cfg.Rest)
		}
	}
}

// waitForSlot blocks until at least one place is free and returns how
// many are, capped by what --once and --max-jobs still allow; 0 when ctx
// ends or a job claimed ahead has waited too long.
func (w *Worker) waitForSlot(ctx context.Context) int {
	var stale <-chan time.Time
	if len(w.ahead.held) > 0 {
		t := time.NewTimer(time.Until(w.holdDeadline()))
		defer t.Stop()
		stale = t.C
	}
	for w.inflight.free() == 0 {
		select {
		case <-ctx.Done():
			return 0
		case <-stale:
			return 0
		case <-w.wake:
			if w.paused.Load() {
				return 0
			}
		}
	}
	free := w.inflight.free()
	if w.cfg.Once {
		free = 1
	}
	if w.cfg.MaxJobs > 0 {
		free = min(free, w.cfg.MaxJobs-int(w.Claimed()))
	}
	return max(free, 0)
}

// claim reserves up to n jobs (one at a time in --laravel-exact mode).
// Only classes with a handler are reserved unless --unrouted=fail.
func (w *Worker) claim(ctx context.Context, n int) ([]jobqueue.JobRow, error) {
	opts, ok := w.claimOptions()
	queues := w.claimQueues(ctx)
	w.lastQueues = nil
	if !ok || len(queues) == 0 {
		return nil, nil
	}
	if w.cfg.LaravelExact {
		n = 1
	}
	if m := w.cfg.Metrics; m != nil {
		started := time.Now()
		defer func() { m.observeClaim(time.Since(started)) }()
	}
	w.lastQueues = queues
	if len(w.cfg.QueueForwards) > 0 {
		w.lastQueues = w.claimed(queues)
	}
	jobs, err := w.store.Claim(ctx, w.lastQueues, n, opts)
	if err == nil && w.problemsChanged.Load() {
		w.problems.Clear(configproblem.KindSchema, configproblem.KindPermission)
	}
	if err != nil {
		err = w.claimError(ctx, err)
	}
	return jobs, err
}

// storeDefaultQueue is the queues of a claim when none is configured:
// the store's default queue, spelled "". Shared and only read (made per
// claim it was an allocation each).
var storeDefaultQueue = []string{""}

// claimQueues are the configured queues minus the paused ones: those
// laraworker's pauses hold (PauseQueues) and those Laravel's hold
// (laravelpause.go). No queue configured means the store's default queue,
// which is spelled "" here.
func (w *Worker) claimQueues(ctx context.Context) []string {
	queues := w.cfg.Queues
	if len(queues) == 0 {
		queues = storeDefaultQueue
	}
	if paused := w.pausedQueues.Load(); paused != nil && len(*paused) > 0 {
		queues = slices.DeleteFunc(slices.Clone(queues), func(q string) bool { return slices.Contains(*paused, q) })
	}
	if w.cfg.Cache == nil { // no Laravel pause to read
		w.lpause.allHeld = false
		return queues
	}
	held := w.laravelPaused(ctx, queues)
	w.lpause.allHeld = len(queues) > 0 && len(held) == len(queues)
	if len(held) == 0 {
		return queues
	}
	return slices.DeleteFunc(slices.Clone(queues), func(q string) bool { return slices.Contains(held, q) })
}

// claimOptions restricts claims to routed classes (unless --unrouted=fail)
// and away from rows given back to PHP; ok is false when nothing may be
// claimed at all. The class filter is kept between claims (claimFilter).
func (w *Worker) claimOptions() (jobqueue.ClaimOptions, bool) {
	now := w.clock.Now()
	f := &w.filter
	expired := !f.until.IsZero() && !now.Before(f.until)
	if !f.built || expired || w.filterStale.Load() {
		w.filterStale.Store(false) // a change from here on makes it again
		f.rebuild(w, now)
	}
	opts := jobqueue.ClaimOptions{DisplayNames: f.names, ExcludeDisplayNames: f.exclude}
	if w.skip.size.Load() > 0 {
		opts.ExcludeIDs = w.skip.list(now)
	}
	return opts, f.ok
}

// claimFilter is the class filter of the claims. Made anew for each claim
// it sorted and copied the routes and locked the problems each time (a
// tenth of an idle claim's functions); it changes only when a problem is
// reported or cleared, or a class's block ends, so it is kept until then.
// The routes are the registry's when the worker was made (New).
type claimFilter struct {
	built   bool
	until   time.Time // when a block in it ends; zero: none
	names   []string
	exclude []string
	ok      bool
}

func (f *claimFilter) rebuild(w *Worker, now time.Time) {
	blocked, until := w.problems.BlockedClasses(now)
	*f = claimFilter{built: true, until: until, ok: true}
	if w.cfg.Unrouted == UnroutedSkip {
		f.names = configproblem.WithoutBlocked(w.routes, blocked)
		f.ok = len(f.names) > 0
		return
	}
	f.exclude = append(blocked, bridgehooks.HookClasses...)
}

// reallyEmpty confirms an empty claim before --stop-when-empty stops: SKIP
// LOCKED skips rows other transactions hold, so an empty claim can happen
// while claimable rows exist.
func (w *Worker) reallyEmpty(ctx context.Context) bool {
	opts, ok := w.claimOptions()
	queues := w.claimQueues(ctx)
	if !ok || len(queues) == 0 {
		return true
	}
	n, err := w.store.CountClaimable(ctx, w.claimed(queues), opts)
	return err == nil && n == 0
}

// claimError fails a row whose reservation itself failed (attempts
// overflowing tinyint unsigned), as Laravel 12.54+ does, so it cannot wedge
// the queue; other errors are returned for the loop to log and retry.
func (w *Worker) claimError(ctx context.Context, err error) error {
	var ce *jobqueue.ClaimError
	if !errors.As(err, &ce) {
		return err
	}
	w.log.Error().Err(ce.Err).Int64("id", ce.Job.ID).Msg("reserving a job failed; failing it")
	p, _ := payload.Parse(ce.Job.Payload) // nil when unreadable: the failed row then gets a new uuid
	// Fenced by the row as it was selected: failed only if nobody has
	// reserved it since.
	w.completer.fail(ce.Job, p, phpexception.FailureText(ce.Err), nil, w.exec.hooks.ForFailure(ce.Job, p, ce.Err, false, carriedBy(p)))
	return errRowFailedAtClaim
}

// errRowFailedAtClaim tells the loop a claim found a row but failed it.
var errRowFailedAtClaim = errors.New("worker: a row failed while being reserved")

func (w *Worker) claimFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	w.cfg.Metrics.claimError()
	if !w.problems.SetupProblem(err) {
		w.log.Error().Err(err).Msg("claiming jobs failed; retrying")
	}
	clock.Sleep(ctx, w.clock, time.Second+w.cfg.Sleep)
}

// dispatch hands a claimed row to an executor of its own. The job is in
// flight before it runs, so the loop never sees a claimed job as neither
// queued nor running.
func (w *Worker) dispatch(jobCtx context.Context, row jobqueue.JobRow) {
	w.stats.claimed.Add(1)
	ctx, cancel := context.WithCancelCause(jobCtx)
	w.inflight.dispatch(&jobExecutor{executorDeps: w.exec, ctx: ctx, cancel: cancel, row: row, started: w.clock.Now()})
}

// inFlight is the one record of the jobs a worker holds, from claim until
// their outcome is handed to the completer: each job's executor, how many
// of them have not decided their outcome yet (shutdown gives those Grace),
// and the goroutines that run them. Its limit is the concurrency: the
// producer claims as many jobs as there are free places.
//
// The goroutines are long-lived, one per busy place, started as the
// places first fill up. A goroutine per job would be created for each
// job and grow its stack again for each (payload parsing and command
// decoding go deep): on the no-op path that was a tenth of the worker's
// CPU. A handler still runs on a goroutine of its own (jobExecutor.call),
// so an abandoned one never holds a place's goroutine.
type inFlight struct {
	limit int
	// left is called after a job left: a place is free.
	left func()

	mu        sync.Mutex
	jobs      map[*jobExecutor]struct{}
	undecided int
	// held is len(jobs), for the producer's loop to read without the lock.
	held atomic.Int32
	// decided is closed when no job is undecided; made on demand.
	decided chan struct{}

	work chan *jobExecutor
	// leftTotal counts the jobs that left their places (claimahead.go).
	leftTotal atomic.Int64
	// fastTotal counts the jobs that left their places after running for
	// less than fastUnder (nanoseconds): the producer's last claim time
	// (claimahead.go).
	fastTotal atomic.Int64
	fastUnder atomic.Int64
	// started counts the goroutines; only the producer starts them.
	started int
	exited  sync.WaitGroup
}

func newInFlight(limit int, left func()) *inFlight {
	return &inFlight{limit: limit, left: left, jobs: map[*jobExecutor]struct{}{}, work: make(chan *jobExecutor)}
}

// dispatch records e and runs it on an idle goroutine, or on a new one
// while fewer than limit run. The caller checked that a place is free, so
// with limit goroutines started one of them is idle or about to be.
func (f *inFlight) dispatch(e *jobExecutor) {
	f.mu.Lock()
	f.jobs[e] = struct{}{}
	f.held.Store(int32(len(f.jobs)))
	f.undecided++
	f.mu.Unlock()
	select {
	case f.work <- e:
		return
	default:
	}
	if f.started < f.limit {
		f.started++
		f.exited.Add(1)
		go f.serve(e)
		return
	}
	f.work <- e
}

func (f *inFlight) serve(first *jobExecutor) {
	defer f.exited.Done()
	f.run(first)
	for {
		e, ok := nextJob(f.work)
		if !ok {
			return
		}
		f.run(e)
	}
}

// stackReserve is what a goroutine waiting for its next job keeps of its
// stack. A collection halves the stack of a goroutine that uses less than
// a quarter of it, and the next job then grows it back, copying it frame
// by frame: at GOGC 100 and concurrency 128 that was an eighth of the
// worker's instructions per job (callgrind). Waiting inside a frame of 8
// KiB keeps a stack of up to 32 KiB whole, which the no-op job's path fits
// in (runtime.copystack then fell from 12.7% to 1.3% of the instructions);
// the cost is at most 32 KiB of stack per place.
const stackReserve = 8 << 10

// nextJob receives the next job inside a frame of stackReserve bytes.
func nextJob(work <-chan *jobExecutor) (*jobExecutor, bool) {
	var reserve [stackReserve]byte
	holdFrame(&reserve)
	e, ok := <-work
	return e, ok
}

// holdFrame keeps reserve on the stack; it must not be inlined, or the
// array would be optimised away.
//
//go:noinline
func holdFrame(*[stackReserve]byte) {}

// run executes e; then e leaves and its place is free.
func (f *inFlight) run(e *jobExecutor) {
	began := time.Now()
	e.execute()
	f.mu.Lock()
	delete(f.jobs, e)
	f.held.Store(int32(len(f.jobs)))
	f.mu.Unlock()
	if int64(time.Since(began)) < f.fastUnder.Load() {
		f.fastTotal.Add(1)
	}
	f.leftTotal.Add(1)
	f.left()
}

// markDecided records that e's outcome is decided (its handler is done
// with it); the executor calls it once.
func (f *inFlight) markDecided() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.undecided--
	if f.undecided == 0 && f.decided != nil {
		close(f.decided)
		f.decided = nil
	}
}

// allDecided is closed once no job's outcome is undecided. Only
// meaningful when no more jobs are dispatched (shutdown).
func (f *inFlight) allDecided() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.undecided == 0 {
		done := make(chan struct{})
		close(done)
		return done
	}
	if f.decided == nil {
		f.decided = make(chan struct{})
	}
	return f.decided
}

func (f *inFlight) len() int { return int(f.held.Load()) }

// free is how many more jobs may be dispatched now.
func (f *inFlight) free() int { return max(f.limit-int(f.held.Load()), 0) }

// all lists the jobs held now.
func (f *inFlight) all() []*jobExecutor {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*jobExecutor, 0, len(f.jobs))
	for e := range f.jobs {
		out = append(out, e)
	}
	return out
}

// olderThan lists the jobs held for at least d.
func (f *inFlight) olderThan(d time.Duration, now time.Time) []*jobExecutor {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*jobExecutor
	for e := range f.jobs {
		if now.Sub(e.started) >= d {
			out = append(out, e)
		}
	}
	return out
}

// close waits until every job has left and stops the goroutines; call
// after the last dispatch.
func (f *inFlight) close() {
	close(f.work)
	f.exited.Wait()
}

// stopReason is stopIfNecessary's list, in Laravel's order (quit and lost
// connection are handled by ctx and claim errors).
func (w *Worker) stopReason(start time.Time, found, empty bool) StopReason {
	switch {
	case w.cfg.Once && found:
		return StopOnce
	case w.cfg.MemoryMB > 0 && w.memoryExceeded():
		return StopMemory
	case w.cfg.Cache != nil && w.restartRequested(!found):
		return StopRestart
	case w.cfg.StopWhenEmpty && empty:
		return StopEmpty
	case w.cfg.MaxTime > 0 && w.clock.Now().Sub(start) >= w.cfg.MaxTime:
		return StopMaxTime
	case w.cfg.MaxJobs > 0 && w.Claimed() >= int64(w.cfg.MaxJobs):
		return StopMaxJobs
	}
	return ""
}

// restartKey is where `php artisan queue:restart` writes its timestamp.
const restartKey = "illuminate:queue:restart"

// restartStamp reads the value `php artisan queue:restart` writes to the
// cache; "" when there is no shared cache or no value.
func (w *Worker) restartStamp(ctx context.Context) string {
	if w.cfg.Cache == nil {
		return ""
	}
	v, _, err := w.cfg.Cache.Get(ctx, restartKey)
	if err != nil {
		w.log.Warn().Err(err).Msg("reading the queue:restart signal failed")
		return w.lastRestart
	}
	return string(v)
}

// restartEvery is how often, at most, the loop reads the queue:restart
// stamp while jobs come: PHP reads it after each job, which for a Go
// worker claiming many jobs at once was a cache read (a round trip to the
// database or Redis) per claim. While idle it is read once per --sleep
// at most, as PHP's idle loop reads it (once per sleep): at one poll a
// second the read was a third of an idle worker's round trips. A restart
// is seen at most this much later (or --sleep, idle), in real time.
const restartEvery = time.Second

// restartRequested is Laravel's queueShouldRestart: the stamp changed since
// the worker started, so `php artisan queue:restart` stops Go workers too.
// idle: the last claim found nothing. Only the loop calls it.
func (w *Worker) restartRequested(idle bool) bool {
	every := restartEvery
	if idle {
		every = max(every, w.cfg.Sleep)
	}
	now := time.Now()
	if w.cfg.Cache == nil || now.Sub(w.restartReadAt) < every {
		return false
	}
	w.restartReadAt = now
	return w.restartStamp(context.Background()) != w.lastRestart
}

// nudge wakes the loop: a job left, or the worker resumed.
func (w *Worker) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// sleepOrWake waits d, or less when ctx ends, a job leaves or Resume
// nudges the worker. Only the loop calls it, so its one timer serves
// every wait.
func (w *Worker) sleepOrWake(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	w.idle.Reset(d)
	defer w.idle.Stop()
	select {
	case <-ctx.Done():
	case <-w.wake:
	case <-w.idleC:
	}
}

// drain waits for running handlers: without limit when the worker stopped
// by itself, for Grace after a stop signal; then cancels their contexts
// and gives back whatever is still running (interrupted.go).
func (w *Worker) drain(reason StopReason, cancelJobs context.CancelFunc) {
	done := w.inflight.allDecided()
	if reason != StopInterrupted {
		<-done
		return
	}
	grace := w.clock.NewTimer(w.cfg.Grace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C():
	}
	w.log.Warn().Int("running", w.inflight.len()).Msg("grace period over; cancelling running jobs")
	cancelJobs()
	abandon := w.clock.NewTimer(w.cfg.Abandon)
	defer abandon.Stop()
	select {
	case <-done:
	case <-abandon.C():
		w.releaseAbandoned()
	}
}

// releaseAbandoned gives back the jobs whose handlers did not stop in
// time at shutdown, as any job cut short by shutdown, so another worker
// runs them.
func (w *Worker) releaseAbandoned() {
	for _, e := range w.inflight.all() {
		if row, ok := e.take(); ok {
			p := e.parsedPayload() // parsed before its handler ran
			if w.cfg.Ran != nil {
				w.cfg.Ran(row, e.started, w.clock.Now().Sub(e.started))
			}
			w.exec.interrupted(row, p, true)
			w.cfg.Metrics.jobDone(row.Queue, w.exec.metricsClass(p), "interrupted", w.clock.Now().Sub(e.started))
		}
	}
}
