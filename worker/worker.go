package worker

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/worker/internal/batchlookup"
	"github.com/laraworker/laraworker/worker/internal/bridgehooks"
	"github.com/laraworker/laraworker/worker/internal/configproblem"
	"github.com/laraworker/laraworker/worker/internal/jobmiddleware"
	"github.com/laraworker/laraworker/worker/internal/jobtrace"
	"github.com/laraworker/laraworker/worker/internal/maxexceptions"
	"github.com/laraworker/laraworker/worker/internal/onceset"
	"github.com/laraworker/laraworker/worker/internal/uniquelock"
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
	// ExitConfigProblem: the worker stopped on an empty queue (or after
	// --once) while a configuration problem held jobs back during the run
	// (Stats.ConfigProblems): the queue is empty for Go only, and cron or
	// CI must not read it as success. 2, as `work` exits for a setup it
	// refuses at start.
	ExitConfigProblem = 2
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
// these stats: ExitOutcomesDropped when outcomes were dropped,
// ExitConfigProblem when it stopped on an empty queue (or after --once)
// while a configuration problem held jobs back, else the reason's.
func ExitCode(reason StopReason, st jobqueue.WorkerStats) int {
	if st.Dropped > 0 {
		return ExitOutcomesDropped
	}
	if st.ConfigProblems > 0 && (reason == StopEmpty || reason == StopOnce) {
		return ExitConfigProblem
	}
	return reason.ExitCode()
}

// Worker claims and runs jobs. Create it with New and call Run once.
type Worker struct {
	// The Worker is the producer of one job's path: it claims rows and
	// dispatches each to a jobExecutor of its own (executor.go), which
	// runs the job and hands its outcome to the completer (completer.go),
	// which writes it.

	store jobqueue.Store
	// waiter is the store's signal of pushes, nil when it has none
	// (idlewait.go): asked once, not after every empty claim.
	waiter jobqueue.Waiter
	reg    *handlers.Registry
	cfg    Config
	log    zerolog.Logger
	clock  clock.Clock

	completer *completer
	// inflight is every job held, from claim until its outcome is handed
	// to the completer.
	inflight *inFlight
	// ahead holds the jobs claimed ahead of a free place (claimahead.go).
	ahead claimAhead
	// exec is what each job's executor is built from.
	exec *executorDeps
	// problems blocks the classes a configuration problem stops.
	problems *configproblem.Problems
	// skip lists the rows given back to PHP, which claims exclude.
	skip *skipSet
	// routes are the classes with a handler, taken at New; filter is the
	// claims' class filter made from them (producer.go).
	routes []string
	filter claimFilter
	// filterStale: the problems changed since filter was made;
	// problemsChanged: they changed at least once (until then a claim
	// has none to clear).
	filterStale, problemsChanged atomic.Bool

	stats counters

	paused       atomic.Bool
	pausedQueues atomic.Pointer[[]string]
	// lpause is Laravel's own pauses (queue:pause), read from the cache.
	lpause laravelPauses
	wake   chan struct{}
	// poll is the adaptive wait between empty claims, lastQueues the
	// queues the last claim took from (idlewait.go).
	poll       idlePoll
	lastQueues []string
	// narrow is the worker's part in Config.NarrowWhenIdle (narrow.go).
	narrow idleness
	// idle is the timer of the loop's waits (sleepOrWake) and idleC its
	// channel, made once: a timer per wait was an allocation and two
	// calls per empty claim. Stopped between waits.
	idle  clock.Timer
	idleC <-chan time.Time
	// lastRestart is `illuminate:queue:restart` as read at start;
	// restartReadAt when the loop read it last (restartRequested).
	lastRestart   string
	restartReadAt time.Time
	// rss is --memory's last reading (memory.go).
	rss struct {
		readAt time.Time
		over   bool
	}
}

// workerLogger is the worker's logger: l with the worker's name, or the
// disabled logger when l is the zero value, which writes nowhere but
// whose level lets every line through: the tests of the level before a
// job's lines (executor.go) then see that nothing is logged and skip the
// lines' work.
func workerLogger(l zerolog.Logger, name string) zerolog.Logger {
	if reflect.DeepEqual(l, zerolog.Logger{}) {
		return zerolog.Nop()
	}
	return l.With().Str("worker", name).Logger()
}

// New builds a worker on store for the handlers of reg. Zero fields of cfg
// get their defaults (Config.WithDefaults). Register every handler before
// New: it checks the registrations and takes the classes the worker
// claims.
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
		store: store, reg: reg, cfg: cfg, clock: cfg.clock,
		log:  workerLogger(cfg.Logger, cfg.Name),
		wake: make(chan struct{}, 1),
		skip: &skipSet{},
	}
	w.waiter, _ = store.(jobqueue.Waiter)
	w.idle = w.clock.NewTimer(time.Hour)
	w.idle.Stop()
	w.idleC = w.idle.C()
	w.problems = configproblem.New(w.log, func(kind string) {
		w.stats.configProblems.Add(1)
		cfg.Metrics.configError(kind)
	}, func() {
		w.problemsChanged.Store(true)
		w.filterStale.Store(true)
	}, w.clock)
	unique := &uniquelock.Locks{Stores: cfg.Locks, DefaultStore: cfg.CacheStore, Version: cfg.LaravelVersion, Log: w.log, Clock: w.clock}
	if err := unique.CheckClasses(reg); err != nil {
		return nil, err
	}
	mw := &jobmiddleware.Resolver{Stores: cfg.StateStores, Limiters: cfg.DurationLimiters, DefaultStore: cfg.CacheStore,
		Version: cfg.LaravelVersion, OptIn: cfg.RunWithoutPHPMiddleware, Log: w.log}
	if err := mw.CheckRegistrations(reg); err != nil {
		return nil, err
	}
	hooks, err := bridgehooks.New(cfg.Bridge, cfg.LaravelVersion, store, w.log)
	if err != nil {
		return nil, err
	}
	hooks.LogBridge(cfg.Bridge, store)
	bridgehooks.WarnUnknowable(cfg.Bridge, cfg.LaravelVersion, reg, w.log)
	// Series that count rare events exist from the start, at 0.
	w.routes = reg.Names()
	cfg.Metrics.watch(cfg.Queues, w.routes)
	w.completer = newCompleter(completerDeps{
		store: store, log: w.log, metrics: cfg.Metrics, clock: w.clock, stats: &w.stats, written: cfg.Written, group: !cfg.LaravelExact,
		setupProblem: w.problems.SetupProblem,
	})
	w.inflight = newInFlight(cfg.Concurrency, w.nudge)
	w.lpause.none = !hasLaravelPause(cfg.LaravelVersion)
	w.exec = &executorDeps{
		cfg: &w.cfg, reg: reg, log: w.log, clock: w.clock,
		completer: w.completer, inflight: w.inflight, problems: w.problems, skip: w.skip,
		unique: unique, mw: mw, batches: batchlookup.New(cfg.Batches), exceptions: maxexceptions.New(cfg.Exceptions, cfg.Cache, w.log),
		legacyTexts: cfg.LaravelVersion != "" && appconfig.VersionCompare(cfg.LaravelVersion, "10.10") < 0,
		connection:  store.Connection,
		stats:       &w.stats,
		hooks:       hooks,
		notes:       &onceset.Set{},
		tracer:      jobtrace.New(cfg.TracerProvider, cfg.Redact),
		destination: destinationOf(store),
	}
	return w, nil
}

// Pause stops claiming new jobs (SIGUSR2); running jobs go on.
func (w *Worker) Pause() {
	if !w.paused.Swap(true) {
		w.log.Info().Msg("paused: no new jobs are claimed")
	}
	// The loop may wait for a place with jobs claimed ahead: it gives
	// them back now.
	w.nudge()
}

// Resume claims again after Pause (SIGCONT).
func (w *Worker) Resume() {
	if w.paused.Swap(false) {
		w.log.Info().Msg("resumed")
	}
	w.nudge()
}

// Paused says whether the worker is paused (Pause, SIGUSR2), not
// claiming new jobs.
func (w *Worker) Paused() bool { return w.paused.Load() }

// PauseQueues stops claiming from these queues (replacing the previous
// set; none resumes them all). Other queues are claimed as before.
func (w *Worker) PauseQueues(queues []string) {
	list := append([]string(nil), queues...)
	w.pausedQueues.Store(&list)
	w.nudge()
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
	start := w.clock.Now()
	w.stats.started.Store(start.UnixNano())
	w.lastRestart, w.restartReadAt = w.restartStamp(ctx), time.Now()
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	completerDone := w.completer.start()
	leaseDone := w.startLease(jobCtx)

	w.narrow.start(w.cfg.NarrowWhenIdle)
	reason := w.loop(ctx, jobCtx, start)
	w.narrow.stop()
	w.giveBackHeld("stopping")

	w.log.Info().Str("reason", string(reason)).Int("running", w.inflight.len()).Msg("worker stopping")
	if reason == StopInterrupted {
		// A supervisor's stop timeout counts from its signal.
		w.completer.giveUpAt(w.clock.Now().Add(w.cfg.Grace + w.cfg.WriteGrace))
	}
	w.drain(reason, cancelJobs)
	cancelJobs()
	<-leaseDone
	// Every handler has returned (or was abandoned); outcomes still being
	// written get until the write deadline.
	w.completer.giveUpAt(w.clock.Now().Add(w.cfg.WriteGrace))
	w.inflight.close()
	w.completer.stop()
	<-completerDone
	if st := w.Stats(); st.Dropped > 0 {
		w.log.Error().Int64("dropped", st.Dropped).
			Msg("outcomes dropped: not written before the write deadline; those jobs come back after retry_after and run again")
	}
	return reason
}
