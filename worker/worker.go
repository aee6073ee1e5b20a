package worker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel"
	"github.com/laraworker/laraworker/payload"
	"github.com/rs/zerolog"
)

// Exit statuses, as artisan's Worker uses them.
const (
	ExitSuccess     = 0
	ExitError       = 1
	ExitMemoryLimit = 12
)

// StopReason says why Run returned (Laravel's WorkerStopReason names).
type StopReason string

const (
	StopInterrupted StopReason = "interrupted"
	StopMaxJobs     StopReason = "max_jobs"
	StopMemory      StopReason = "memory"
	StopMaxTime     StopReason = "max_time"
	StopEmpty       StopReason = "empty"
	StopOnce        StopReason = "once"
	StopRestart     StopReason = "restart_signal"
)

// ExitCode is the process status artisan exits with for a stop reason.
func (r StopReason) ExitCode() int {
	if r == StopMemory {
		return ExitMemoryLimit
	}
	return ExitSuccess
}

// Worker claims and runs jobs. Create it with New and call Run once.
type Worker struct {
	q       *laravel.Queue
	reg     *handlers.Registry
	enc     *payload.Encrypter
	opts    Options
	log     zerolog.Logger
	metrics *Metrics
	now     func() time.Time

	exceptions         ExceptionCounter
	fallbackExceptions *memoryCounter
	completer          *completer
	running            runningSet
	processed          atomic.Int64
	paused             atomic.Bool
	stopping           atomic.Bool
	wake               chan struct{}
	skip               skipSet
	batches            batchCache
	// lastRestart is `illuminate:queue:restart` as read at start.
	lastRestart string
	// legacyTexts selects Laravel 8/9's exception texts.
	legacyTexts bool
}

// New builds a worker. enc may be nil (no APP_KEY: encrypted commands then
// fail with a message saying so); metrics may be nil.
func New(q *laravel.Queue, reg *handlers.Registry, enc *payload.Encrypter, opts Options, log zerolog.Logger, metrics *Metrics) (*Worker, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Abandon <= 0 {
		opts.Abandon = 5 * time.Second
	}
	w := &Worker{
		q: q, reg: reg, enc: enc, opts: opts, log: log, metrics: metrics, now: time.Now,
		exceptions: opts.MaxExceptionsCache,
		running:    runningSet{m: map[int64]*running{}},
		wake:       make(chan struct{}, 1),
	}
	w.legacyTexts = opts.LaravelVersion != "" && laravel.VersionCompare(opts.LaravelVersion, "10.10") < 0
	w.fallbackExceptions = newMemoryCounter()
	if w.exceptions == nil {
		if cache := q.Cache(); cache != nil {
			w.exceptions = CacheCounter{Cache: cache}
		} else {
			w.exceptions = w.fallbackExceptions
		}
	}
	w.completer = newCompleter(w)
	return w, nil
}

// Pause stops claiming new jobs (SIGUSR2); running jobs go on.
func (w *Worker) Pause() { w.paused.Store(true) }

// Resume claims again after Pause (SIGCONT).
func (w *Worker) Resume() {
	w.paused.Store(false)
	w.nudge()
}

func (w *Worker) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Processed is how many jobs this worker has claimed.
func (w *Worker) Processed() int64 { return w.processed.Load() }

// Run claims and runs jobs until a stop condition holds or ctx ends (a stop
// signal). Then it lets running jobs finish for Grace, cancels the rest,
// releases what still runs, and writes every decided outcome.
func (w *Worker) Run(ctx context.Context) StopReason {
	start := w.now()
	w.lastRestart = w.restartStamp(ctx)
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	completerDone := w.completer.start()
	leaseDone := w.startLease(jobCtx)

	slots := make(chan struct{}, w.opts.Concurrency)
	var wg sync.WaitGroup
	reason := w.loop(ctx, jobCtx, start, slots, &wg)

	w.stopping.Store(true)
	w.log.Info().Str("reason", string(reason)).Int("running", w.running.len()).Msg("worker stopping")
	w.drain(reason, &wg, cancelJobs)
	cancelJobs()
	<-leaseDone
	w.completer.stop()
	<-completerDone
	return reason
}

// loop is the daemon loop: claim as many jobs as there are free slots, start
// them, and check the stop conditions after every iteration.
func (w *Worker) loop(ctx, jobCtx context.Context, start time.Time, slots chan struct{}, wg *sync.WaitGroup) StopReason {
	for {
		if ctx.Err() != nil {
			return StopInterrupted
		}
		if w.paused.Load() {
			// As Laravel: sleep at least a second while paused, and keep
			// checking the stop conditions.
			w.sleepOrWake(ctx, max(w.opts.Sleep, time.Second))
			if reason := w.stopReason(start, false, false); reason != "" {
				return reason
			}
			continue
		}
		free := w.waitForSlot(ctx, slots)
		if free == 0 || w.paused.Load() {
			if reason := w.stopReason(start, false, false); reason != "" {
				return reason
			}
			continue
		}
		idleBefore := w.running.len() == 0
		jobs, err := w.claim(ctx, free)
		if errors.Is(err, errRowFailedAtClaim) {
			continue // a row was found (and failed): the queue is not empty
		}
		if err != nil {
			w.claimFailed(ctx, err)
			continue
		}
		for _, job := range jobs {
			w.processed.Add(1)
			slots <- struct{}{}
			wg.Add(1)
			// Registered before the goroutine starts, so the loop never sees
			// a claimed job as neither queued nor running.
			r := w.running.add(job, w.now())
			go func() {
				defer func() { <-slots; wg.Done(); w.nudge() }()
				w.process(jobCtx, r)
			}()
		}
		// Empty means empty with nothing running since before the claim: a
		// job finishing meanwhile may have released itself back.
		empty := len(jobs) == 0 && idleBefore && w.running.len() == 0 &&
			(!w.opts.StopWhenEmpty || w.reallyEmpty(ctx))
		if reason := w.stopReason(start, len(jobs) > 0, empty); reason != "" {
			return reason
		}
		if len(jobs) == 0 {
			w.sleep(ctx, w.opts.Sleep)
		} else if w.opts.Rest > 0 {
			w.sleep(ctx, w.opts.Rest)
		}
	}
}

// waitForSlot blocks until at least one slot is free and returns how many
// are, capped by what --once and --max-jobs still allow.
func (w *Worker) waitForSlot(ctx context.Context, slots chan struct{}) int {
	for len(slots) == cap(slots) {
		select {
		case <-ctx.Done():
			return 0
		case <-w.wake:
		}
	}
	free := cap(slots) - len(slots)
	if w.opts.Once {
		free = 1
	}
	if w.opts.MaxJobs > 0 {
		free = min(free, w.opts.MaxJobs-int(w.processed.Load()))
	}
	return max(free, 0)
}

// stopReason is stopIfNecessary's list, in Laravel's order (quit and lost
// connection are handled by ctx and claim errors).
func (w *Worker) stopReason(start time.Time, found, empty bool) StopReason {
	switch {
	case w.opts.Once && found:
		return StopOnce
	case w.opts.MemoryMB > 0 && rssMB() >= float64(w.opts.MemoryMB):
		return StopMemory
	case w.restartRequested():
		return StopRestart
	case w.opts.StopWhenEmpty && empty:
		return StopEmpty
	case w.opts.MaxTime > 0 && w.now().Sub(start) >= w.opts.MaxTime:
		return StopMaxTime
	case w.opts.MaxJobs > 0 && w.processed.Load() >= int64(w.opts.MaxJobs):
		return StopMaxJobs
	}
	return ""
}

// restartStamp reads the value `php artisan queue:restart` writes to the
// cache; "" when there is no shared cache or no value.
func (w *Worker) restartStamp(ctx context.Context) string {
	cache := w.q.Cache()
	if cache == nil {
		return ""
	}
	v, _, err := cache.Get(ctx, "illuminate:queue:restart")
	if err != nil {
		w.log.Warn().Err(err).Msg("reading the queue:restart signal failed")
		return w.lastRestart
	}
	return string(v)
}

// restartRequested is Laravel's queueShouldRestart: the stamp changed since
// the worker started, so `php artisan queue:restart` stops Go workers too.
func (w *Worker) restartRequested() bool {
	return w.q.Cache() != nil && w.restartStamp(context.Background()) != w.lastRestart
}

// claim reserves up to n jobs: one per transaction in --laravel-exact mode,
// else a batch. Only classes with a handler are reserved unless
// --unrouted=fail.
func (w *Worker) claim(ctx context.Context, n int) ([]laravel.JobRow, error) {
	opts, ok := w.claimOptions()
	if !ok {
		return nil, nil
	}
	started := time.Now()
	defer func() { w.metrics.observeClaim(time.Since(started)) }()
	if w.opts.LaravelExact || n == 1 {
		job, err := w.q.Claim(ctx, w.opts.Queues, opts)
		if job == nil {
			return nil, w.claimError(ctx, err)
		}
		return []laravel.JobRow{*job}, err
	}
	jobs, err := w.q.ClaimBatch(ctx, w.opts.Queues, n, opts)
	return jobs, w.claimError(ctx, err)
}

// claimOptions restricts claims to routed classes (unless --unrouted=fail)
// and away from rows given back to PHP; ok is false when nothing may be
// claimed at all.
func (w *Worker) claimOptions() (laravel.ClaimOptions, bool) {
	opts := laravel.ClaimOptions{ExcludeIDs: w.skip.list(w.now())}
	if w.opts.Unrouted == UnroutedSkip {
		opts.DisplayNames = w.reg.Names()
		return opts, len(opts.DisplayNames) > 0
	}
	return opts, true
}

// reallyEmpty confirms an empty claim before --stop-when-empty stops: SKIP
// LOCKED skips rows other transactions hold, so an empty claim can happen
// while claimable rows exist.
func (w *Worker) reallyEmpty(ctx context.Context) bool {
	opts, ok := w.claimOptions()
	if !ok {
		return true
	}
	n, err := w.q.CountClaimable(ctx, w.opts.Queues, opts)
	return err == nil && n == 0
}

// claimError fails a row whose reservation itself failed (attempts
// overflowing tinyint unsigned), as Laravel 12.54+ does, so it cannot wedge
// the queue; other errors are returned for the loop to log and retry.
func (w *Worker) claimError(ctx context.Context, err error) error {
	var ce *laravel.ClaimError
	if !errors.As(err, &ce) {
		return err
	}
	w.log.Error().Err(ce.Err).Int64("id", ce.Job.ID).Msg("reserving a job failed; failing it")
	p, _ := payload.Parse(ce.Job.Payload) // nil when unreadable: failRow then gives it a uuid
	w.failRow(ctx, ce.Job, p, ce.Err)
	return errRowFailedAtClaim
}

// errRowFailedAtClaim tells the loop a claim found a row but failed it.
var errRowFailedAtClaim = errors.New("worker: a row failed while being reserved")

func (w *Worker) claimFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	w.metrics.claimError()
	w.log.Error().Err(err).Msg("claiming jobs failed; retrying")
	w.sleep(ctx, time.Second+w.opts.Sleep)
}

// sleep waits d, or less when ctx ends.
func (w *Worker) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// sleepOrWake waits d, or less when ctx ends or Resume nudges the worker.
func (w *Worker) sleepOrWake(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-w.wake:
	case <-t.C:
	}
}

// drain waits for running jobs: without limit when the worker stopped by
// itself, for Grace after a stop signal; then cancels their contexts and
// releases whatever is still running.
func (w *Worker) drain(reason StopReason, wg *sync.WaitGroup, cancelJobs context.CancelFunc) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if reason != StopInterrupted {
		<-done
		return
	}
	grace := time.NewTimer(w.opts.Grace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
	}
	w.log.Warn().Int("running", w.running.len()).Msg("grace period over; cancelling running jobs")
	cancelJobs()
	abandon := time.NewTimer(w.opts.Abandon)
	defer abandon.Stop()
	select {
	case <-done:
	case <-abandon.C:
		w.releaseAbandoned()
	}
}
