package console

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/gctune"
	"github.com/laraworker/laraworker/internal/procmem"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/worker"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

func workCommand(reg *handlers.Registry) *cli.Command {
	return &cli.Command{
		Name:  "work",
		Usage: "run jobs that have Go handlers, like `php artisan queue:work`",
		Flags: append(append(cmdline.ConnectionFlags(),
			&cli.StringFlag{Name: "queue", Usage: "queues in priority order, comma separated (default: the queues the bridge routes classes to on this connection, plus the connection's default queue for routes the bridge does not send there; without the bridge's routes, the connection's default queue)"},
			&cli.StringFlag{Name: "name", Value: "default", Usage: "worker name, shown in logs"},
			cmdline.DurationFlag("sleep", worker.DefaultSleep, "the longest wait when no job is available (on redis, the wait on the queues' :notify lists, which a push ends at once)"),
			cmdline.DurationFlag("idle-poll", worker.DefaultIdlePoll, "on a database queue, the longest wait between claims that find nothing within a minute of the last job: the wait starts at 20ms after a claim that found work and doubles up to this and --sleep, and after a quiet minute up to --sleep (0: up to --sleep from the start)"),
			cmdline.DurationFlag("rest", 0, "how long to rest after each claim that found jobs"),
			&cli.BoolFlag{Name: "once", Usage: "run a single job, then stop"},
			&cli.BoolFlag{Name: "stop-when-empty", Usage: "stop when the queues are empty"},
			cmdline.CountFlag("max-jobs", 0, "stop after this many jobs (0: no limit)"),
			cmdline.DurationFlag("max-time", 0, "stop after this long (0: no limit)"),
			cmdline.CountFlag("memory", worker.DefaultMemoryMB, "stop with status 12 when RSS reaches this many MB (0: never)"),
			cmdline.DurationFlag("timeout", worker.DefaultTimeout, "how long a job may run when its payload sets no timeout (0: none)"),
			cmdline.CountFlag("tries", worker.DefaultTries, "attempts when the payload sets no maxTries (0: unlimited)"),
			&cli.StringFlag{Name: "backoff", Value: "0", Usage: "seconds before retrying a failed job when the payload sets no backoff (\"1,5,10\" allowed)"},
			&cli.IntFlag{Name: "concurrency", Value: worker.DefaultConcurrency, Usage: "jobs run at once"},
			cmdline.DurationFlag("grace", worker.DefaultGrace, "after a stop signal, how long running jobs may finish before they are cancelled and released"),
			cmdline.DurationFlag("write-grace", worker.DefaultWriteGrace, "after the worker stops, how long outcome writes that keep failing (database down) are retried before they are dropped (exit status 75; the jobs run again after retry_after); a stop signal makes the worker exit within --grace + --write-grace"),
			&cli.BoolFlag{Name: "laravel-exact", Usage: "claim one job per transaction and delete jobs one by one, exactly as Laravel does"},
			&cli.StringFlag{Name: "horizon", Value: "auto", EnvVars: []string{"LARAWORKER_HORIZON"}, Usage: "on a redis queue connection, write Laravel Horizon's records of the jobs Go runs (status, completed and failed lists, metrics, tags), as Horizon's PHP listeners do: auto (when the app has laravel/horizon installed), on or off"},
			&cli.StringFlag{Name: "pulse", Value: pulseAuto, EnvVars: []string{"LARAWORKER_PULSE"}, Usage: "record Laravel Pulse's Queues and Slow Jobs entries for the jobs Go runs, where and as the app's Pulse records PHP's (docs/PULSE.md): auto (when the app runs Pulse), on (stop at start if it does not) or off"},
			&cli.StringFlag{Name: "unrouted", Value: string(worker.UnroutedSkip), Usage: "jobs without a handler: skip (never reserve them) or fail"},
			&cli.StringSliceFlag{Name: "run-without-php-middleware", Usage: "`CLASS` whose jobs run in Go even when part of their job middleware is PHP code (a custom class, a closure) or keeps its state where Go cannot reach it; each such job is logged (repeatable; * for every class). By default they are left to PHP workers"},
			&cli.StringSliceFlag{Name: "run-without-php-declarations", Usage: "`CLASS` routed by --route that runs in Go although its jobs carry no bridge record of what the PHP class declares (ShouldBeUnique, models, deleteWhenMissingModels, job middleware), so Go runs them without it (repeatable; * for every class). By default such a --route is refused at start"},
			&cli.StringSliceFlag{Name: "pass-env", Usage: "`NAME` of a variable of the worker's environment exec handlers get (by default only PATH, HOME, USER, LOGNAME, LANG, LANGUAGE, LC_*, TZ, TMPDIR and Windows' system variables; repeatable)"},
			&cli.StringSliceFlag{Name: "route", EnvVars: []string{"LARAWORKER_ROUTES"}, Usage: "`CLASS=HANDLER` with HANDLER noop, log or exec:COMMAND (repeatable); checked at start: an exec COMMAND must exist and be executable, and, with the app read through its PHP, CLASS must be a class of the app"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus /metrics and /healthz on `PORT or HOST:PORT` (a bare port binds 127.0.0.1; other hosts need " + envMetricsToken + ")"},
			&cli.StringFlag{Name: "pprof-addr", Usage: "serve Go's pprof profiles (/debug/pprof/) on `PORT or HOST:PORT` (a bare port binds 127.0.0.1; other hosts need " + envMetricsToken + "; off by default)"},
			cmdline.LaravelVersionFlag("it picks the exception texts written to failed_jobs and the unique lock keys of 8 to 11.38 (default: the app's version; unknown: 10.10+'s texts)"),
			&cli.StringFlag{Name: "log-level", Value: "info", EnvVars: []string{"LARAWORKER_LOG_LEVEL"}, Usage: "`LEVEL`: debug (every job's start too), info (every job's end), warn, error"},
			&cli.StringFlag{Name: "log-format", Value: "auto", Usage: "json, text, or auto (text on a terminal, JSON otherwise)"},
			&cli.BoolFlag{Name: "create-tables", Usage: "create the jobs, failed_jobs and job_batches tables if missing"},
			&cli.BoolFlag{Name: "heartbeat", Value: true, Usage: "record this worker in laraworker_workers (the dashboard's fleet) and obey pauses set from the dashboard (--heartbeat=false: neither)"},
			&cli.StringFlag{Name: "dashboard-addr", Usage: "serve the web dashboard on `PORT or HOST:PORT` (see `laraworker dashboard --help`)"},
			&cli.BoolFlag{Name: "narrow-when-idle", Value: true, Usage: "once the worker has run nothing for 2s, run the process's Go code on one thread (GOMAXPROCS 1) until a claim finds a job: an idle worker's polls then wake fewer threads, for a tenth to a third less CPU (--narrow-when-idle=false: GOMAXPROCS stays as it is)"},
		), append(append(horizonCLIFlags(), longWaitFlags()...), dashboardFlags("dashboard-")...)...),
		Action: cmdline.NoArgs(func(c *cli.Context) error { return runWork(c, reg) }),
	}
}

// runWork is `work`: the flags read once, the app's configuration read and
// logged once, one connection, one worker config.
func runWork(c *cli.Context, reg *handlers.Registry) error {
	f, err := readWorkFlags(c, reg)
	if err != nil {
		return err
	}
	defer f.flushLog()
	// A worker's live heap is small and it allocates for every job: the
	// collector gets a fixed headroom instead of GOGC's 100% (unless GOGC
	// is set in the environment).
	gc := gctune.Start(gctune.Headroom(f.worker.MemoryMB, uint64(max(procmem.RSS(), 0))))
	defer gc.Stop()
	f.log.Debug().Bool("tuned", gc != nil).Msg("gc: the heap may grow by up to 32 MiB (a quarter of the room --memory leaves above the RSS at start, if less) between collections, GOGC 100 to 400; GOGC in the environment wins")
	cfg, info, err := queueconn.LoadAppConfig(c, cmdline.ConnectionOverrides(c))
	if err != nil {
		return startError(err)
	}
	logAppConfig(f.log, cfg, info)
	if err := queueDriverError(info); err != nil {
		return startError(err)
	}
	bridge, hooks, err := workBridge(info)
	if err != nil {
		return startError(err)
	}
	f.worker.Bridge, f.hooks = bridge, hooks
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	defer stop()
	tracing, err := startTracing(ctx, f.log)
	if err != nil {
		return cli.Exit("work: "+err.Error(), 1)
	}
	defer stopTracing(tracing, f.log)
	f.worker.TracerProvider = tracing.Provider
	f.worker.Redact = output.Secrets(c.App).String
	// --once and --stop-when-empty stop at the first empty claim, as
	// artisan's do: a long poll (SQS) would only delay that.
	noWait := f.worker.Once || f.worker.StopWhenEmpty || f.exact
	conn, err := queueconn.Open(ctx, cfg, info, queueconn.Options{Exact: f.exact, Log: f.log, Hooks: hooks, Horizon: f.horizon, NoLongPoll: noWait})
	if err != nil {
		// A Redis setting Go cannot honour is known before any job is
		// touched: a configuration error, as a bad flag is.
		return startError(err)
	}
	if err := conn.SharedRedisErr; redisproto.IsConfigError(err) {
		conn.Close()
		return cli.Exit("work: the app's redis cache store (queue:restart, unique locks, job middleware state): "+err.Error(), 2)
	}
	defer conn.Close()
	if conn.Driver == queueconn.DriverSQS && !noWait && !c.IsSet("sleep") {
		// The claim's long poll is the wait: a sleep after it would only
		// keep a job that comes meanwhile waiting.
		f.worker.Sleep = -1
		f.log.Info().Msg("sqs: an empty claim waits on the queue with a long poll (up to 5 s), which replaces --sleep's pause (pass --sleep to pause after it too)")
	}
	if conn.Driver == queueconn.DriverSQS && !c.IsSet("idle-poll") {
		// Each claim is a long poll already (and a billed request): a
		// --sleep given pauses its whole length after an empty one.
		f.worker.IdlePoll = -1
	}
	if err := f.applyHorizonSupervisor(conn, info); err != nil {
		return horizonUsageError(err)
	}
	f.completeFromApp(cfg, info, reg)
	return runWorker(ctx, f, conn, info, reg)
}

// ExitStart is work's status when the setup is wrong before it claimed
// anything (as a usage error): a connection the app does not define or
// cannot reach, a missing table, a --route to a class the app does not
// have, an exec handler that does not exist. A supervisor restarting it
// sees the same status each time, and no job was touched.
const ExitStart = cmdline.ExitUsage

// startError is the error `work` stops with before it claims anything.
func startError(err error) error {
	return cli.Exit("work: "+strings.TrimPrefix(err.Error(), "work: "), ExitStart)
}

// workFlags are the work command's flags, each read once.
type workFlags struct {
	log zerolog.Logger
	// flushLog writes the log lines the logger still gathers (see
	// output.LineBatcher): deferred by runWork.
	flushLog func()
	// worker is what the flags say of the worker's config (workConfig),
	// completed from the app's configuration (completeFromApp).
	worker worker.Config
	// exact is --laravel-exact: it goes to the connection, and from there
	// to the store, the worker and the claim path.
	exact bool
	// horizon is --horizon, for a redis connection's store;
	// horizonFlags the other Horizon flags.
	horizon      string
	horizonFlags horizonFlags
	// pulse is --pulse.
	pulse string
	// longWaits are --long-waits and its thresholds, and the webhook.
	longWaits longWaitSetup
	// versionSet: --laravel-version was given, and wins over the app's.
	versionSet              bool
	createTables, heartbeat bool
	// obs is --metrics-addr and --pprof-addr, and their token.
	obs observeSetup
	// dashboard is --dashboard-addr and its options; no addr: none.
	dashboard dashboardSetup
	// hooks is the bridge's hooks queue (workBridge); nil: none.
	hooks *queueconn.HooksQueue
	// routes is what the start checks of the routes' classes take.
	routes routeSetup
}

// readWorkFlags reads and checks the flags and registers --route's
// handlers. Nothing is opened yet.
func readWorkFlags(c *cli.Context, reg *handlers.Registry) (_ workFlags, err error) {
	log, flushLog, err := workLogger(c)
	if err != nil {
		return workFlags{}, cli.Exit(err.Error(), 1)
	}
	defer func() {
		if err != nil {
			flushLog()
		}
	}()
	logGoRedis(log)
	passEnv, err := checkPassEnv(c.StringSlice("pass-env"), log)
	if err != nil {
		return workFlags{}, err
	}
	execOpts := handlers.ExecOptions{Logger: log, PassEnv: passEnv, Redact: output.Secrets(c.App)}
	cliRoutes, err := addRoutes(reg, c.StringSlice("route"), execOpts)
	if err != nil {
		return workFlags{}, cmdline.UsageError("work: %s", strings.TrimPrefix(err.Error(), "work: "))
	}
	unrouted, err := worker.ParseUnrouted(c.String("unrouted"))
	if err != nil {
		return workFlags{}, cmdline.UsageError("work: %v", err)
	}
	if err := queueconn.CheckHorizonFlag(c.String("horizon")); err != nil {
		return workFlags{}, cmdline.UsageError("work: %v", err)
	}
	if err := checkPulseFlag(c.String("pulse")); err != nil {
		return workFlags{}, cmdline.UsageError("work: %v", err)
	}
	obs, err := readObserveFlags(c, c.String("metrics-addr"), c.String("pprof-addr"), log)
	if err != nil {
		return workFlags{}, err
	}
	dash, err := readDashboardSetup(c, "dashboard-", "dashboard-addr")
	if err != nil {
		return workFlags{}, err
	}
	longWaits, err := readLongWaitFlags(c)
	if err != nil {
		return workFlags{}, err
	}
	f := workFlags{
		log: log, flushLog: flushLog, worker: workConfig(c, unrouted), exact: c.Bool("laravel-exact"), horizon: c.String("horizon"), pulse: c.String("pulse"), longWaits: longWaits, versionSet: c.IsSet("laravel-version"),
		createTables: c.Bool("create-tables"), heartbeat: c.Bool("heartbeat"), obs: obs, dashboard: dash,
		horizonFlags: readHorizonFlags(c),
		routes: routeSetup{cli: cliRoutes, php: c.String("php"),
			optIn: c.StringSlice("run-without-php-declarations"), mwOptIn: c.StringSlice("run-without-php-middleware")},
	}
	return f, f.check(reg)
}

// check refuses what cannot run: a bad --laravel-version or
// --concurrency, and no handler at all (unless --unrouted=fail).
func (f workFlags) check(reg *handlers.Registry) error {
	if v := f.worker.LaravelVersion; v != "" && !appconfig.ValidVersion(v) {
		return cmdline.UsageError("work: --laravel-version %q: want a version such as 8.83 or 12.67", v)
	}
	if f.worker.Concurrency < 1 {
		return cmdline.UsageError("work: --concurrency must be at least 1")
	}
	if len(reg.Names()) == 0 && f.worker.Unrouted != worker.UnroutedFail {
		return cli.Exit("work: no handlers: register some in your program or pass --route 'App\\Jobs\\X=noop'", ExitStart)
	}
	return nil
}

// completeFromApp resolves the settings the app has a say in: the queues
// default to those the bridge routes classes to (bridgeQueues), else to
// the connection's default queue (Laravel's getQueue); the Laravel
// version (failed_jobs texts) to the app's.
func (f *workFlags) completeFromApp(cfg appconfig.Config, info appconfig.AppInfo, reg *handlers.Registry) {
	if len(f.worker.Queues) == 0 {
		if queues := bridgeQueues(info.Bridge, info.Connection, cfg.DefaultQueue, reg); len(queues) > 0 {
			f.worker.Queues = queues
			f.log.Info().Strs("queues", queues).Msg("serving the queues the bridge routes classes to (config/laraworker.php); --queue chooses others")
		}
	}
	f.worker.Queues = effectiveQueues(f.worker.Queues, cfg.DefaultQueue)
	f.worker.QueueForwards = info.QueueForwardsFor(queueconn.OrString(info.Connection, cfg.ConnectionName))
	if !f.versionSet && info.Version != "" {
		f.worker.LaravelVersion = info.Version
	}
	f.worker.ModelsConnection = info.DBConnection
}

// runWorker checks the setup, builds the worker and runs it until it
// stops.
func runWorker(ctx context.Context, f workFlags, conn *queueconn.Connection, info appconfig.AppInfo, reg *handlers.Registry) error {
	if err := checkWorkSetup(ctx, f, conn, info, reg); err != nil {
		return err
	}
	deps, err := newWorkerDeps(ctx, f, conn, info)
	if err != nil {
		return startError(err)
	}
	defer deps.closeLocks()
	if deps.pulse, err = startPulse(ctx, f.pulse, conn, info, f.log); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if err := startLongWaits(ctx, f.longWaits, conn, info, f.worker.Queues, f.obs.metricsAddr != "", f.log); err != nil {
		return cli.Exit("work: long waits: "+err.Error(), 1)
	}
	w, err := worker.New(conn.Store, reg, workerConfig(f, conn, deps))
	if err != nil {
		return startError(err)
	}
	if err := serveBesideWorker(ctx, f, conn, w, deps.metrics); err != nil {
		return startError(err)
	}
	watchPauseSignals(ctx, w)
	// Horizon's Terminate command ends the run as a stop signal does.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	horizon, stopHorizon, err := startHorizonRegistration(runCtx, f, conn, info, w, stopRun)
	if err != nil {
		return cli.Exit("work: "+err.Error(), 1)
	}
	logWorkerStarted(ctx, f, conn, reg, info)
	stopHeartbeat := startHeartbeat(deps.heartbeat, w)
	stopPulse := deps.pulse.run(runCtx)
	reason := w.Run(runCtx)
	stopPulse()
	stopHorizon()
	stopHeartbeat()
	return workExit(f, w, reason, horizon)
}

// checkWorkSetup creates the tables when asked, then runs the startup
// checks: nothing is claimed before they pass.
func checkWorkSetup(ctx context.Context, f workFlags, conn *queueconn.Connection, info appconfig.AppInfo, reg *handlers.Registry) error {
	if f.createTables {
		if err := conn.CreateTables(ctx); err != nil {
			return startError(err)
		}
	}
	if err := checkSetup(ctx, conn, info, f.worker.Queues, reg, f.routes, f.log); err != nil {
		return startError(err)
	}
	if w := hooksQueueWarning(f.hooks, conn.Store.Connection(), f.worker.Queues); w != "" {
		// A note, not a warning: on an app whose PHP workers serve the
		// default queue, as most do, nothing is wrong.
		f.log.Info().Msg(w)
	}
	warnUnsharedCache(conn, f.worker.LaravelVersion, f.log)
	return nil
}

// workerDeps are what the worker's config takes beside the settings.
type workerDeps struct {
	enc     *payload.Encrypter
	metrics *worker.Metrics // --metrics-addr
	counts  *fleet.Counts   // --heartbeat
	// heartbeat records the worker in the fleet and reads the dashboard's
	// pauses (--heartbeat); nil: off, or laraworker's tables are missing.
	heartbeat *fleet.Heartbeat
	locks     map[string]jobqueue.LockStore
	// state is where job middleware keep their state.
	state middlewareState
	// pulse records Laravel Pulse's entries (--pulse); nil: none.
	pulse *pulseRecorder
	// closeLocks closes the lock stores' clients.
	closeLocks func()
}

// newWorkerDeps makes them, and serves pprof when asked.
func newWorkerDeps(ctx context.Context, f workFlags, conn *queueconn.Connection, info appconfig.AppInfo) (workerDeps, error) {
	enc, err := queueconn.Encrypter(conn.Cfg)
	if err != nil {
		return workerDeps{}, err
	}
	if f.obs.pprofAddr != "" {
		if err := servePprof(ctx, f.obs, f.log); err != nil {
			return workerDeps{}, err
		}
	}
	d := workerDeps{enc: enc}
	d.locks, d.state, d.closeLocks = lockStores(conn.Store, conn.Cfg, info, f.worker.LaravelVersion, f.log)
	if f.obs.metricsAddr != "" {
		if d.metrics, err = workerMetrics(conn.Store); err != nil {
			d.closeLocks()
			return workerDeps{}, err
		}
	}
	if f.heartbeat {
		d.counts = fleet.NewCounts(nil)
		d.heartbeat = newHeartbeat(conn, d.counts, f.worker.Concurrency, f.log)
	}
	return d, nil
}

// workerConfig is the worker's config, built once: the settings the
// flags and the app resolved, the connection's exact mode, and what was
// made for the worker.
func workerConfig(f workFlags, conn *queueconn.Connection, d workerDeps) worker.Config {
	wcfg := f.worker
	wcfg.LaravelExact = conn.Exact
	wcfg.Logger, wcfg.Encrypter, wcfg.Metrics = f.log, d.enc, d.metrics
	wcfg.App = &handlers.App{Config: conn.Cfg, DB: conn.DB()}
	wcfg.Locks, wcfg.CacheStore = d.locks, conn.Cfg.CacheStore
	wcfg.StateStores, wcfg.DurationLimiters = d.state.stores, d.state.limiters
	if d.counts != nil {
		wcfg.Written, wcfg.Ran = d.counts.Written, d.counts.Ran
	}
	if d.pulse != nil {
		wcfg.Observers = append(wcfg.Observers, d.pulse.rec)
	}
	if d.heartbeat != nil {
		wcfg.BeforeClaim = d.heartbeat.ReadPausesSoon
	}
	return wcfg
}

// serveBesideWorker serves --metrics-addr and --dashboard-addr.
func serveBesideWorker(ctx context.Context, f workFlags, conn *queueconn.Connection, w *worker.Worker, m *worker.Metrics) error {
	if f.obs.metricsAddr != "" {
		// A dashboard feeds the depth gauges from its snapshot, without the
		// full-table count pollDepth runs.
		if err := serveMetrics(ctx, f.obs, conn, w, m, f.dashboard.addr == "", f.log); err != nil {
			return err
		}
	}
	if f.dashboard.addr == "" {
		return nil
	}
	setup := f.dashboard
	if m != nil {
		setup.metrics = worker.NewQueueMetrics(prometheus.DefaultRegisterer, m.Depth)
	}
	_, err := startDashboard(ctx, conn, setup, f.log)
	return err
}

// logWorkerStarted is the line that says what the worker runs.
func logWorkerStarted(ctx context.Context, f workFlags, conn *queueconn.Connection, reg *handlers.Registry, info appconfig.AppInfo) {
	lock, claim := conn.Claim(ctx, f.log)
	ev := f.log.Info().Str("worker", f.worker.Name).Strs("queues", f.worker.Queues).Strs("routes", reg.Names()).
		Int("concurrency", f.worker.Concurrency).Str("config", info.Source).Str("driver", conn.Cfg.Driver).
		Str("lock", lock).Str("claim", claim)
	if fw := forwardedQueues(f.worker.Queues, f.worker.QueueForwards); len(fw) > 0 {
		// Queue::forward: what queue:work --queue=old pops is new.
		ev = ev.Strs("forwarded", fw)
	}
	ev.Msg("worker started")
}

// forwardedQueues says, for the log, which of queues Queue::forward sends
// elsewhere ("old -> new").
func forwardedQueues(queues []string, forwards map[string]string) []string {
	var out []string
	for _, q := range queues {
		if to, ok := forwards[q]; ok {
			out = append(out, q+" -> "+to)
		}
	}
	return out
}

// workExit logs the worker's end and gives artisan's exit status (or the
// one Horizon's Terminate command asked for).
func workExit(f workFlags, w *worker.Worker, reason worker.StopReason, horizon *horizonRun) error {
	st := w.Stats()
	code := worker.ExitCode(reason, st)
	if status, ok := horizon.exitStatus(); ok && code == 0 {
		code = status
	}
	stopped := f.log.Info()
	switch {
	case st.Dropped > 0:
		stopped = f.log.Error()
	case code == worker.ExitConfigProblem:
		stopped = f.log.Error().Str("why", "a configuration problem held jobs back (logged above): the queues are empty for this worker, not done")
	case reason == worker.StopMemory:
		stopped = f.log.Warn().Str("memory", fmt.Sprintf("RSS reached --memory %d MB", f.worker.MemoryMB))
	}
	stopped.Str("worker", f.worker.Name).Str("reason", string(reason)).Int64("claimed", st.Claimed).Int64("done", st.Done).
		Int64("failed", st.Failed).Int64("released", st.Released).Int64("returned", st.Returned).
		Int64("lost", st.Lost).Int64("dropped", st.Dropped).Int64("interrupted", st.Interrupted).Int64("config_problems", st.ConfigProblems).
		Int("exit", code).Msg("worker stopped")
	if code != 0 {
		return cli.Exit("", code)
	}
	return nil
}

// workConfig maps artisan's flags onto worker.Config: where a flag's 0
// means "none" (--sleep, --timeout, --tries, --memory), the Config takes a
// negative value, because its 0 means "the default". --laravel-exact is
// not here: the worker takes it from the connection (workerConfig).
func workConfig(c *cli.Context, unrouted worker.Unrouted) worker.Config {
	return worker.Config{
		Queues:         worker.ParseQueues(c.String("queue")),
		Name:           c.String("name"),
		Sleep:          orNone(cmdline.DurationOf(c, "sleep")),
		IdlePoll:       orNone(cmdline.DurationOf(c, "idle-poll")),
		NarrowWhenIdle: c.Bool("narrow-when-idle"),
		Rest:           cmdline.DurationOf(c, "rest"),
		Once:           c.Bool("once"),
		StopWhenEmpty:  c.Bool("stop-when-empty"),
		MaxJobs:        int(cmdline.CountOf(c, "max-jobs")),
		MaxTime:        cmdline.DurationOf(c, "max-time"),
		MemoryMB:       orNone(int(cmdline.CountOf(c, "memory"))),
		Timeout:        orNone(cmdline.DurationOf(c, "timeout")),
		Tries:          orNone(int(cmdline.CountOf(c, "tries"))),
		Backoff:        c.String("backoff"),
		Concurrency:    c.Int("concurrency"),
		Grace:          orNone(cmdline.DurationOf(c, "grace")),
		WriteGrace:     orNone(cmdline.DurationOf(c, "write-grace")),
		Unrouted:       unrouted,
		LaravelVersion: c.String("laravel-version"),

		RunWithoutPHPMiddleware: c.StringSlice("run-without-php-middleware"),
	}
}

// orNone turns a flag's 0 ("none") into worker.Config's negative "none".
func orNone[T int | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// bridgeQueues are the queues `work` serves without --queue when the
// installed bridge routes classes to Go on the served connection: the
// queues of its routes there, in config order (the route's, else the
// bridge's 'queue'), then the connection's default queue when a route of
// the worker is no class the bridge routes (its jobs stay where PHP
// dispatches them). None without such routes.
func bridgeQueues(b *appconfig.BridgeConfig, connection, defaultQueue string, reg *handlers.Registry) []string {
	if b == nil || !b.Installed {
		return nil
	}
	var queues []string
	routed := map[string]bool{}
	for _, r := range b.Jobs {
		if conn := queueconn.OrString(r.Connection, b.Connection); conn != "" && conn != connection {
			continue // another connection's
		}
		routed[strings.ToLower(r.Class)] = true
		if q := queueconn.OrString(r.Queue, b.Queue); q != "" && !slices.Contains(queues, q) {
			queues = append(queues, q)
		}
	}
	if len(queues) == 0 {
		return nil
	}
	for _, name := range reg.Names() {
		if !routed[strings.ToLower(name)] && !slices.Contains(queues, defaultQueue) {
			queues = append(queues, defaultQueue)
		}
	}
	return queues
}

// effectiveQueues is what the worker watches: --queue, else the
// connection's default queue (Laravel's getQueue).
func effectiveQueues(queues []string, def string) []string {
	out := make([]string, 0, len(queues))
	for _, q := range queues {
		if q == "" {
			q = def
		}
		out = append(out, q)
	}
	if len(out) == 0 {
		out = append(out, def)
	}
	return out
}

// checkPassEnv refuses a --pass-env that is not a variable name, and says
// which named variables the worker's environment does not have (a
// handler would miss them).
func checkPassEnv(names []string, log zerolog.Logger) ([]string, error) {
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, "= \t\n") {
			return nil, cmdline.UsageError("work: --pass-env %q: want the name of an environment variable, as in --pass-env SENTRY_DSN", n)
		}
		if _, ok := os.LookupEnv(n); !ok {
			log.Warn().Str("variable", n).Msg("--pass-env names a variable the worker's environment does not have: exec handlers do not get it")
		}
	}
	return names, nil
}

// addRoutes registers built-in handlers from --route CLASS=HANDLER, exec
// handlers with opts, and returns the classes. An exec: command that does
// not exist or is not executable is refused here: every job of the class
// would otherwise go to failed_jobs with "no such file or directory".
func addRoutes(reg *handlers.Registry, routes []string, opts handlers.ExecOptions) ([]string, error) {
	var classes []string
	for _, r := range routes {
		for _, one := range splitRoutes(r) {
			class, spec, ok := strings.Cut(one, "=")
			if !ok || class == "" || spec == "" {
				return nil, errors.New("work: --route wants CLASS=HANDLER, got " + one)
			}
			h, err := handlers.BuiltinWith(spec, opts)
			if err != nil {
				return nil, fmt.Errorf("--route %s: %w", class, err)
			}
			if err := checkExecCommand(spec); err != nil {
				return nil, fmt.Errorf("--route %s: %w", class, err)
			}
			reg.Handle(class, h)
			classes = append(classes, class)
		}
	}
	return classes, nil
}

// checkExecCommand checks that an exec: handler's command exists and is
// executable, as the worker will run it (a bare name is looked up on
// PATH, a relative path from the worker's folder).
func checkExecCommand(spec string) error {
	rest, ok := strings.CutPrefix(spec, "exec:")
	if !ok {
		return nil
	}
	argv, err := handlers.SplitArgs(rest)
	if err != nil || len(argv) == 0 {
		return err
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return fmt.Errorf("exec handler %s: %w", argv[0], unwrapLookPath(err))
	}
	return nil
}

// unwrapLookPath says why LookPath refused a command, without repeating
// its name.
func unwrapLookPath(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		switch {
		case errors.Is(ee.Err, exec.ErrNotFound):
			return errors.New("not found on PATH")
		case errors.Is(ee.Err, fs.ErrNotExist):
			return errors.New("no such file")
		case errors.Is(ee.Err, fs.ErrPermission):
			return errors.New("not executable (chmod +x it)")
		}
		return ee.Err
	}
	return err
}

// splitRoutes lets LARAWORKER_ROUTES hold several routes separated by ';'
// or newlines (commas may appear inside exec commands).
func splitRoutes(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' }) {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// workerMetrics registers the worker's collectors on Prometheus's default
// registry, the one /metrics serves: collectors a program registers there
// itself (handlers.Metrics(prometheus.DefaultRegisterer)) show up too. A
// store that exports metrics of its own (the Redis store: the jobs its
// claims leave for PHP workers) is registered there too.
func workerMetrics(store jobqueue.Store) (m *worker.Metrics, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("--metrics-addr: registering the worker's metrics: %v", r)
		}
	}()
	m = worker.NewMetrics(prometheus.DefaultRegisterer)
	if c, ok := store.(prometheus.Collector); ok {
		prometheus.DefaultRegisterer.MustRegister(c)
	}
	return m, nil
}

// serveMetrics serves /metrics (Prometheus's default registry) and
// /healthz for a worker, and polls queue depth when poll is set. /healthz
// is 503 while the store is unreachable or the worker has a
// configuration problem, with the reason; when healthy it lists below
// its "ok" the jobs the worker's claims leave in place for PHP workers
// (a Redis queue's), one line per queue and class.
func serveMetrics(ctx context.Context, obs observeSetup, conn *queueconn.Connection, w *worker.Worker, m *worker.Metrics, poll bool, log zerolog.Logger) error {
	if err := serveOn(ctx, obs, prometheus.DefaultGatherer, conn.Ping, w.Health, leftNotes(conn.Store), log); err != nil {
		return err
	}
	if poll {
		go pollDepth(ctx, conn.Store, m, log)
	}
	return nil
}

// leftNotes are /healthz's lines on the jobs the store's claims leave
// in place for other workers; nil for a store that leaves none.
func leftNotes(store jobqueue.Store) func() []string {
	lr, ok := store.(jobqueue.LeftReporter)
	if !ok {
		return nil
	}
	return func() []string {
		var out []string
		for _, l := range lr.LeftNow() {
			out = append(out, l.String())
		}
		return out
	}
}

// serveOn serves g's metrics and /healthz at obs's metrics address,
// behind its guard: the store is pinged, then health (when given) says
// whether the process can do its work, and notes (when given) add
// lines below a healthy "ok".
func serveOn(ctx context.Context, obs observeSetup, g prometheus.Gatherer, ping func(context.Context) error, health func() error, notes func() []string, log zerolog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, r *http.Request) {
		if err := ping(r.Context()); err != nil {
			http.Error(rw, "database unreachable", http.StatusServiceUnavailable)
			return
		}
		if health != nil {
			if err := health(); err != nil {
				reason := "unhealthy (the reason is shown with the metrics token)"
				if showReason(r.Context()) {
					reason = "configuration problem: " + err.Error()
				}
				http.Error(rw, reason, http.StatusServiceUnavailable)
				return
			}
		}
		body := "ok\n"
		// The notes name queues and classes: like a failure's reason, they
		// are shown only to whoever may read the metrics.
		if notes != nil && showReason(r.Context()) {
			for _, n := range notes() {
				body += n + "\n"
			}
		}
		_, _ = rw.Write([]byte(body))
	})
	ln, err := listen("metrics-addr", obs.metricsAddr)
	if err != nil {
		return err
	}
	serveUntilDone(ctx, ln, obs.guard(mux), metricsWriteTimeout, log)
	log.Info().Str("addr", ln.Addr().String()).Bool("token", obs.token != "").Msg("serving metrics on /metrics")
	return nil
}

func pollDepth(ctx context.Context, q jobqueue.Admin, m *worker.Metrics, log zerolog.Logger) {
	t := time.NewTicker(15 * time.Second)
	defer t.Stop()
	for {
		sizes, err := q.Sizes(ctx)
		if err == nil {
			for _, s := range sizes {
				m.Depth.WithLabelValues(s.Queue, "ready").Set(float64(s.Ready))
				m.Depth.WithLabelValues(s.Queue, "delayed").Set(float64(s.Delayed))
				m.Depth.WithLabelValues(s.Queue, "reserved").Set(float64(s.Reserved))
			}
		} else if ctx.Err() == nil {
			log.Warn().Err(err).Msg("reading queue sizes failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// workLogger is the worker's logger as --log-format and --log-level say;
// its lines are batched (a line per job), flush writes those waiting.
func workLogger(c *cli.Context) (log zerolog.Logger, flush func(), err error) {
	log, flush, err = output.BuildBatchedLogger(c.App.ErrWriter, c.String("log-format"), output.Secrets(c.App))
	if err != nil {
		return log, flush, err
	}
	level, err := zerolog.ParseLevel(c.String("log-level"))
	if err != nil || c.String("log-level") == "" || level > zerolog.ErrorLevel || level < zerolog.DebugLevel {
		return log, flush, fmt.Errorf("work: --log-level %q: want debug, info, warn or error", c.String("log-level"))
	}
	return log.Level(level), flush, nil
}

// ensureFleetTables makes laraworker's own tables on the first start
// (the workers, pauses, history and recent jobs tables the dashboard
// reads), so a new install needs no `laraworker tables` for them. When they
// cannot be made (a database user without CREATE), the heartbeat is off
// and one line says so, instead of a warning per write.
func ensureFleetTables(own *fleet.Store, log zerolog.Logger) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	created, err := own.Ensure(ctx)
	tables := own.Tables()
	names := strings.Join([]string{tables.Workers, tables.Pauses, tables.History, tables.Recent}, ", ")
	switch {
	case err != nil:
		log.Warn().Err(err).Msg("laraworker's own tables (" + names + ") are missing and could not be made: this worker is not listed on the dashboard, records no metrics and ignores its pauses until `laraworker tables` makes them (or run with --heartbeat=false)")
		return false
	case len(created) > 0:
		log.Info().Strs("tables", created).Msg("made laraworker's own tables (the dashboard's workers, pauses, metrics and recent jobs)")
	}
	return true
}

// newHeartbeat is the worker's record in the fleet, whose pauses the
// worker's claim loop reads (worker.Config.BeforeClaim): nil when the
// fleet's tables are out of reach (said in the log).
func newHeartbeat(conn *queueconn.Connection, counts *fleet.Counts, concurrency int, log zerolog.Logger) *fleet.Heartbeat {
	own, err := conn.Database("the fleet's heartbeat")
	if err != nil {
		log.Warn().Err(err).Msg("the worker is not recorded in the fleet, and pauses from the dashboard do not reach it")
		return nil
	}
	if !ensureFleetTables(own.Fleet, log) {
		return nil
	}
	return &fleet.Heartbeat{Store: own.Fleet, Counts: counts, Concurrency: concurrency, Version: Version, Logger: log}
}

// startHeartbeat records w in the workers table and applies pauses from
// the dashboard until the returned stop is called (after Run), which
// marks the row stopped. Without a heartbeat (--heartbeat=false, no
// tables) it does nothing.
func startHeartbeat(hb *fleet.Heartbeat, w *worker.Worker) (stop func()) {
	if hb == nil {
		return func() {}
	}
	hb.Worker = w
	ctx, cancel := context.WithCancel(context.Background())
	hb.Start(ctx)
	done := make(chan struct{})
	go func() { hb.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}
