package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/rs/zerolog"
)

// Exit statuses: artisan's Worker's, and one of laraworker's own.
const (
	ExitSuccess     = 0
	ExitError       = 1
	ExitMemoryLimit = 12
	// ExitOutcomesDropped: the worker stopped with outcomes it could not
	// write before the write deadline (Config.WriteGrace); those jobs come
	// back after retry_after and run again. 75 is sysexits' EX_TEMPFAIL.
	ExitOutcomesDropped = 75
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

// ExitCode is the process status for a run that stopped for reason with
// these stats: ExitOutcomesDropped when outcomes were dropped, else the
// reason's.
func ExitCode(reason StopReason, st Stats) int {
	if st.Dropped > 0 {
		return ExitOutcomesDropped
	}
	return reason.ExitCode()
}

// Worker claims and runs jobs. Create it with New and call Run once.
type Worker struct {
	store     jobqueue.Store
	reg       *handlers.Registry
	cfg       Config
	log       zerolog.Logger
	completer *completer

	exceptions         ExceptionCounter
	fallbackExceptions *memoryCounter
	running            runningSet
	stats              counters
	health             healthState
	keyVerified        atomic.Bool
	paused             atomic.Bool
	pausedQueues       atomic.Pointer[[]string]
	wake               chan struct{}
	skip               skipSet
	batches            batchCache
	// lastRestart is `illuminate:queue:restart` as read at start.
	lastRestart string
	// legacyTexts selects Laravel 8/9's exception texts.
	legacyTexts bool
	unique      uniqueState
}

// New builds a worker on store for the handlers of reg. Zero fields of cfg
// get their defaults (Config.WithDefaults).
func New(store jobqueue.Store, reg *handlers.Registry, cfg Config) (*Worker, error) {
	if store == nil || reg == nil {
		return nil, errors.New("worker: New needs a store and a registry")
	}
	cfg = cfg.WithDefaults(store)
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if store.RetryAfter() < time.Second {
		// A reservation must hold for a while: with retry_after 0 every
		// running job can be taken again at once, and a reservation taken in
		// the same second as this worker's cannot be told apart from it.
		return nil, fmt.Errorf("worker: retry_after is %s: every running job could be taken again at once by another worker; set DB_QUEUE_RETRY_AFTER (Laravel's default is 90)", store.RetryAfter())
	}
	w := &Worker{
		store: store, reg: reg, cfg: cfg,
		log:                cfg.Logger.With().Str("worker", cfg.Name).Logger(),
		running:            runningSet{m: map[int64]*running{}},
		wake:               make(chan struct{}, 1),
		fallbackExceptions: newMemoryCounter(),
		legacyTexts:        cfg.LaravelVersion != "" && appconfig.VersionCompare(cfg.LaravelVersion, "10.10") < 0,
	}
	if err := w.checkUniqueClasses(); err != nil {
		return nil, err
	}
	// Series that count rare events exist from the start, at 0.
	cfg.Metrics.watch(cfg.Queues, reg.Names())
	w.exceptions = cfg.Exceptions
	if w.exceptions == nil {
		if cfg.Cache != nil {
			w.exceptions = CacheCounter{Cache: cfg.Cache}
		} else {
			w.exceptions = w.fallbackExceptions
		}
	}
	w.completer = newCompleter(completerDeps{
		store: store, log: w.log, metrics: cfg.Metrics, stats: &w.stats, written: cfg.Written, group: !cfg.LaravelExact,
		setupProblem: w.setupProblem,
	})
	return w, nil
}

// Pause stops claiming new jobs (SIGUSR2); running jobs go on.
func (w *Worker) Pause() {
	if !w.paused.Swap(true) {
		w.log.Info().Msg("paused: no new jobs are claimed")
	}
}

// Resume claims again after Pause (SIGCONT).
func (w *Worker) Resume() {
	if w.paused.Swap(false) {
		w.log.Info().Msg("resumed")
	}
	w.nudge()
}

// PauseQueues stops claiming from these queues (replacing the previous
// set; none resumes them all). Other queues are claimed as before.
func (w *Worker) PauseQueues(queues []string) {
	list := append([]string(nil), queues...)
	w.pausedQueues.Store(&list)
	w.nudge()
}

func (w *Worker) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Claimed is how many jobs this worker has claimed (reserved) so far,
// whatever became of them.
func (w *Worker) Claimed() int64 { return w.stats.claimed.Load() }

// Run claims and runs jobs until a stop condition holds or ctx ends (a stop
// signal). Then it lets running jobs finish for Grace, cancels the rest,
// gives back what still runs with its attempt restored (Config.Grace),
// and writes every decided outcome, giving
// writes that keep failing until WriteGrace after that (after a stop
// signal: until Grace + WriteGrace after it); what is still unwritten then
// is dropped and counted in Stats.Dropped.
func (w *Worker) Run(ctx context.Context) StopReason {
	start := w.now()
	w.stats.started.Store(start.UnixNano())
	w.lastRestart = w.restartStamp(ctx)
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	completerDone := w.completer.start()
	leaseDone := w.startLease(jobCtx)

	slots := make(chan struct{}, w.cfg.Concurrency)
	var inflight inFlight
	pool := newSlotPool(w.cfg.Concurrency, func(j slotJob) {
		defer func() { <-slots; inflight.all.Done(); w.nudge() }()
		w.process(j.ctx, j.r)
	})
	reason := w.loop(ctx, jobCtx, start, slots, &inflight, pool)

	w.log.Info().Str("reason", string(reason)).Int("running", w.running.len()).Msg("worker stopping")
	if reason == StopInterrupted {
		// A supervisor's stop timeout counts from its signal.
		w.completer.giveUpAt(time.Now().Add(w.cfg.Grace + w.cfg.WriteGrace))
	}
	w.drain(reason, &inflight.handlers, cancelJobs)
	cancelJobs()
	<-leaseDone
	// Every handler has returned (or was abandoned); outcomes still being
	// written get until the write deadline.
	w.completer.giveUpAt(time.Now().Add(w.cfg.WriteGrace))
	inflight.all.Wait()
	pool.close()
	w.completer.stop()
	<-completerDone
	if st := w.Stats(); st.Dropped > 0 {
		w.log.Error().Int64("dropped", st.Dropped).
			Msg("outcomes dropped: not written before the write deadline; those jobs come back after retry_after and run again")
	}
	return reason
}

func (w *Worker) now() time.Time { return w.cfg.Now() }

// loop is the daemon loop: claim as many jobs as there are free slots, start
// them, and check the stop conditions after every iteration.
// inFlight tracks the goroutines of claimed jobs: handlers until each
// job's outcome is decided, all until it is written.
type inFlight struct {
	handlers, all sync.WaitGroup
}

func (w *Worker) loop(ctx, jobCtx context.Context, start time.Time, slots chan struct{}, inflight *inFlight, pool *slotPool) StopReason {
	for {
		if ctx.Err() != nil {
			return StopInterrupted
		}
		if w.paused.Load() {
			// As Laravel: sleep at least a second while paused, and keep
			// checking the stop conditions.
			w.sleepOrWake(ctx, max(w.cfg.Sleep, time.Second))
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
			w.stats.claimed.Add(1)
			slots <- struct{}{}
			inflight.handlers.Add(1)
			inflight.all.Add(1)
			// Registered before the job is handed over, so the loop never
			// sees a claimed job as neither queued nor running.
			runCtx, cancel := context.WithCancelCause(jobCtx)
			r := w.running.add(job, w.now(), cancel, sync.OnceFunc(inflight.handlers.Done))
			pool.submit(slotJob{runCtx, r})
		}
		// Empty means empty with nothing running since before the claim: a
		// job finishing meanwhile may have released itself back.
		empty := len(jobs) == 0 && idleBefore && w.running.len() == 0 &&
			(!w.cfg.StopWhenEmpty || w.reallyEmpty(ctx))
		if reason := w.stopReason(start, len(jobs) > 0, empty); reason != "" {
			return reason
		}
		if len(jobs) == 0 {
			// A job finishing wakes the loop early: it may have been the
			// last one (--stop-when-empty) or released itself back.
			w.sleepOrWake(ctx, w.cfg.Sleep)
		} else if w.cfg.Rest > 0 {
			w.sleep(ctx, w.cfg.Rest)
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
	if w.cfg.Once {
		free = 1
	}
	if w.cfg.MaxJobs > 0 {
		free = min(free, w.cfg.MaxJobs-int(w.Claimed()))
	}
	return max(free, 0)
}

// stopReason is stopIfNecessary's list, in Laravel's order (quit and lost
// connection are handled by ctx and claim errors).
func (w *Worker) stopReason(start time.Time, found, empty bool) StopReason {
	switch {
	case w.cfg.Once && found:
		return StopOnce
	case w.cfg.MemoryMB > 0 && rssMB() >= float64(w.cfg.MemoryMB):
		return StopMemory
	case w.restartRequested():
		return StopRestart
	case w.cfg.StopWhenEmpty && empty:
		return StopEmpty
	case w.cfg.MaxTime > 0 && w.now().Sub(start) >= w.cfg.MaxTime:
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

// restartRequested is Laravel's queueShouldRestart: the stamp changed since
// the worker started, so `php artisan queue:restart` stops Go workers too.
func (w *Worker) restartRequested() bool {
	return w.cfg.Cache != nil && w.restartStamp(context.Background()) != w.lastRestart
}

func (w *Worker) claimFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	w.cfg.Metrics.claimError()
	if !w.setupProblem(err) {
		w.log.Error().Err(err).Msg("claiming jobs failed; retrying")
	}
	w.sleep(ctx, time.Second+w.cfg.Sleep)
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
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-w.wake:
	case <-t.C:
	}
}

// drain waits for running handlers: without limit when the worker stopped
// by itself, for Grace after a stop signal; then cancels their contexts
// and gives back whatever is still running (interrupted.go).
func (w *Worker) drain(reason StopReason, handlers *sync.WaitGroup, cancelJobs context.CancelFunc) {
	done := make(chan struct{})
	go func() { handlers.Wait(); close(done) }()
	if reason != StopInterrupted {
		<-done
		return
	}
	grace := time.NewTimer(w.cfg.Grace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
	}
	w.log.Warn().Int("running", w.running.len()).Msg("grace period over; cancelling running jobs")
	cancelJobs()
	abandon := time.NewTimer(w.cfg.Abandon)
	defer abandon.Stop()
	select {
	case <-done:
	case <-abandon.C:
		w.releaseAbandoned()
	}
}
