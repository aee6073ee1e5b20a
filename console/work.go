package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/fleet"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/gctune"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/payload"
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
		Flags: append(cmdline.ConnectionFlags(),
			&cli.StringFlag{Name: "queue", Usage: "queues in priority order, comma separated (default: the connection's default queue)"},
			&cli.StringFlag{Name: "name", Value: "default", Usage: "worker name, shown in logs"},
			cmdline.DurationFlag("sleep", worker.DefaultSleep, "how long to sleep when no job is available"),
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
			&cli.StringFlag{Name: "unrouted", Value: string(worker.UnroutedSkip), Usage: "jobs without a handler: skip (never reserve them) or fail"},
			&cli.StringSliceFlag{Name: "run-without-php-middleware", Usage: "`CLASS` whose jobs run in Go even when part of their job middleware is PHP code (a custom class, a closure) or keeps its state where Go cannot reach it; each such job is logged (repeatable; * for every class). By default they are left to PHP workers"},
			&cli.StringSliceFlag{Name: "pass-env", Usage: "`NAME` of a variable exec handlers get although it is withheld (DB_*, APP_*, REDIS_*, CACHE_*, QUEUE_*, LARAWORKER_* are, by default; repeatable)"},
			&cli.StringSliceFlag{Name: "route", EnvVars: []string{"LARAWORKER_ROUTES"}, Usage: "`CLASS=HANDLER` with HANDLER noop, log or exec:COMMAND (repeatable)"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus /metrics and /healthz on `PORT or HOST:PORT` (a bare port binds 127.0.0.1)"},
			&cli.StringFlag{Name: "pprof-addr", Usage: "serve Go's pprof profiles (/debug/pprof/) on `PORT or HOST:PORT` (a bare port binds 127.0.0.1; off by default)"},
			cmdline.LaravelVersionFlag("it picks the exception texts written to failed_jobs and the unique lock keys of 8 to 11.38 (default: the app's version; unknown: 10.10+'s texts)"),
			&cli.StringFlag{Name: "log-level", Value: "info", EnvVars: []string{"LARAWORKER_LOG_LEVEL"}, Usage: "`LEVEL`: debug (every job's start too), info (every job's end), warn, error"},
			&cli.StringFlag{Name: "log-format", Value: "auto", Usage: "json, text, or auto (text on a terminal, JSON otherwise)"},
			&cli.BoolFlag{Name: "create-tables", Usage: "create the jobs, failed_jobs and job_batches tables if missing"},
			&cli.BoolFlag{Name: "heartbeat", Value: true, Usage: "record this worker in laraworker_workers (the dashboard's fleet) and obey pauses set from the dashboard (--heartbeat=false: neither)"},
			&cli.StringFlag{Name: "dashboard-addr", Usage: "serve the web dashboard on `PORT or HOST:PORT` (see `laraworker dashboard --help`)"},
			dashboardFlags("dashboard-")[0], dashboardFlags("dashboard-")[1],
		),
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
	// A worker's live heap is small and it allocates for every job: the
	// collector gets a fixed headroom instead of GOGC's 100% (unless GOGC
	// is set in the environment).
	gc := gctune.Start(gctune.Headroom(f.worker.MemoryMB))
	defer gc.Stop()
	f.log.Debug().Bool("tuned", gc != nil).Msg("gc: the heap may grow by up to 32 MiB (a quarter of --memory if less) between collections, GOGC 100 to 400; GOGC in the environment wins")
	cfg, info, err := queueconn.LoadAppConfig(c, cmdline.ConnectionOverrides(c))
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	logAppConfig(f.log, cfg, info)
	bridge, hooks, err := workBridge(info)
	if err != nil {
		return cli.Exit("work: "+err.Error(), 1)
	}
	f.worker.Bridge, f.hooks = bridge, hooks
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	defer stop()
	conn, err := queueconn.Open(ctx, cfg, info, queueconn.Options{Exact: f.exact, Log: f.log, Hooks: hooks, Horizon: f.horizon})
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer conn.Close()
	f.completeFromApp(cfg, info)
	return runWorker(ctx, f, conn, info, reg)
}

// workFlags are the work command's flags, each read once.
type workFlags struct {
	log zerolog.Logger
	// worker is what the flags say of the worker's config (workConfig),
	// completed from the app's configuration (completeFromApp).
	worker worker.Config
	// exact is --laravel-exact: it goes to the connection, and from there
	// to the store, the worker and the claim path.
	exact bool
	// horizon is --horizon, for a redis connection's store.
	horizon string
	// versionSet: --laravel-version was given, and wins over the app's.
	versionSet              bool
	createTables, heartbeat bool
	metricsAddr, pprofAddr  string
	// dashboard is --dashboard-addr and its options; no addr: none.
	dashboard dashboardSetup
	// hooks is the bridge's hooks queue (workBridge); nil: none.
	hooks *queueconn.HooksQueue
}

// readWorkFlags reads and checks the flags and registers --route's
// handlers. Nothing is opened yet.
func readWorkFlags(c *cli.Context, reg *handlers.Registry) (workFlags, error) {
	log, err := workLogger(c)
	if err != nil {
		return workFlags{}, cli.Exit(err.Error(), 1)
	}
	if err := addRoutes(reg, c.StringSlice("route"), c.StringSlice("pass-env"), log); err != nil {
		return workFlags{}, cli.Exit(err.Error(), 1)
	}
	unrouted, err := worker.ParseUnrouted(c.String("unrouted"))
	if err != nil {
		return workFlags{}, cmdline.UsageError("work: %v", err)
	}
	if err := queueconn.CheckHorizonFlag(c.String("horizon")); err != nil {
		return workFlags{}, cmdline.UsageError("work: %v", err)
	}
	f := workFlags{
		log: log, worker: workConfig(c, unrouted), exact: c.Bool("laravel-exact"), horizon: c.String("horizon"), versionSet: c.IsSet("laravel-version"),
		createTables: c.Bool("create-tables"), heartbeat: c.Bool("heartbeat"),
		metricsAddr: c.String("metrics-addr"), pprofAddr: c.String("pprof-addr"),
		dashboard: dashboardSetup{addr: c.String("dashboard-addr"), flag: "dashboard-addr",
			readOnly: c.Bool("dashboard-read-only"), hidePayloads: c.Bool("dashboard-hide-payloads")},
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
		return cli.Exit("work: no handlers: register some in your program or pass --route 'App\\Jobs\\X=noop'", 1)
	}
	return nil
}

// completeFromApp resolves the settings the app has a say in: the queues
// default to the connection's default queue (Laravel's getQueue), the
// Laravel version (failed_jobs texts) to the app's.
func (f *workFlags) completeFromApp(cfg appconfig.Config, info appconfig.AppInfo) {
	f.worker.Queues = effectiveQueues(f.worker.Queues, cfg.DefaultQueue)
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
	deps, err := newWorkerDeps(ctx, f, conn)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer deps.closeLocks()
	w, err := worker.New(conn.Store, reg, workerConfig(f, conn, deps))
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if err := serveBesideWorker(ctx, f, conn, w, deps.metrics); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	watchPauseSignals(ctx, w)
	logWorkerStarted(ctx, f, conn, reg, info)
	stopHeartbeat := startHeartbeat(conn, w, deps.counts, f.worker.Concurrency, f.log)
	reason := w.Run(ctx)
	stopHeartbeat()
	return workExit(f, w, reason)
}

// checkWorkSetup creates the tables when asked, then runs the startup
// checks: nothing is claimed before they pass.
func checkWorkSetup(ctx context.Context, f workFlags, conn *queueconn.Connection, info appconfig.AppInfo, reg *handlers.Registry) error {
	if f.createTables {
		if err := conn.CreateTables(ctx); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	if err := checkSetup(ctx, conn, info, f.worker.Queues, reg, f.log); err != nil {
		return cli.Exit("work: "+err.Error(), 1)
	}
	if w := hooksQueueWarning(f.hooks, conn.Store.Connection(), f.worker.Queues); w != "" {
		f.log.Warn().Msg(w)
	}
	warnUnsharedCache(conn, f.worker.LaravelVersion, f.log)
	return nil
}

// workerDeps are what the worker's config takes beside the settings.
type workerDeps struct {
	enc     *payload.Encrypter
	metrics *worker.Metrics // --metrics-addr
	counts  *fleet.Counts   // --heartbeat
	locks   map[string]jobqueue.LockStore
	// state is where job middleware keep their state.
	state middlewareState
	// closeLocks closes the lock stores' clients.
	closeLocks func()
}

// newWorkerDeps makes them, and serves pprof when asked.
func newWorkerDeps(ctx context.Context, f workFlags, conn *queueconn.Connection) (workerDeps, error) {
	enc, err := queueconn.Encrypter(conn.Cfg)
	if err != nil {
		return workerDeps{}, err
	}
	if f.pprofAddr != "" {
		if err := servePprof(ctx, f.pprofAddr, f.log); err != nil {
			return workerDeps{}, err
		}
	}
	d := workerDeps{enc: enc}
	d.locks, d.state, d.closeLocks = lockStores(conn.Store, conn.Cfg, f.worker.LaravelVersion, f.log)
	if f.metricsAddr != "" {
		if d.metrics, err = workerMetrics(); err != nil {
			d.closeLocks()
			return workerDeps{}, err
		}
	}
	if f.heartbeat {
		d.counts = fleet.NewCounts(nil)
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
	return wcfg
}

// serveBesideWorker serves --metrics-addr and --dashboard-addr.
func serveBesideWorker(ctx context.Context, f workFlags, conn *queueconn.Connection, w *worker.Worker, m *worker.Metrics) error {
	if f.metricsAddr != "" {
		// A dashboard feeds the depth gauges from its snapshot, without the
		// full-table count pollDepth runs.
		if err := serveMetrics(ctx, f.metricsAddr, conn, w, m, f.dashboard.addr == "", f.log); err != nil {
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
	f.log.Info().Str("worker", f.worker.Name).Strs("queues", f.worker.Queues).Strs("routes", reg.Names()).
		Int("concurrency", f.worker.Concurrency).Str("config", info.Source).Str("driver", conn.Cfg.Driver).
		Str("lock", lock).Str("claim", claim).Msg("worker started")
}

// workExit logs the worker's end and gives artisan's exit status.
func workExit(f workFlags, w *worker.Worker, reason worker.StopReason) error {
	st := w.Stats()
	code := worker.ExitCode(reason, st)
	stopped := f.log.Info()
	switch {
	case st.Dropped > 0:
		stopped = f.log.Error()
	case reason == worker.StopMemory:
		stopped = f.log.Warn().Str("memory", fmt.Sprintf("RSS reached --memory %d MB", f.worker.MemoryMB))
	}
	stopped.Str("worker", f.worker.Name).Str("reason", string(reason)).Int64("claimed", st.Claimed).Int64("done", st.Done).
		Int64("failed", st.Failed).Int64("released", st.Released).Int64("returned", st.Returned).
		Int64("lost", st.Lost).Int64("dropped", st.Dropped).Int64("interrupted", st.Interrupted).Int("exit", code).Msg("worker stopped")
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

// addRoutes registers built-in handlers from --route CLASS=HANDLER.
func addRoutes(reg *handlers.Registry, routes, passEnv []string, log zerolog.Logger) error {
	for _, r := range routes {
		for _, one := range splitRoutes(r) {
			class, spec, ok := strings.Cut(one, "=")
			if !ok || class == "" || spec == "" {
				return errors.New("work: --route wants CLASS=HANDLER, got " + one)
			}
			h, err := handlers.Builtin(spec, log, passEnv)
			if err != nil {
				return err
			}
			reg.Handle(class, h)
		}
	}
	return nil
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
// itself (handlers.Metrics(prometheus.DefaultRegisterer)) show up too.
func workerMetrics() (m *worker.Metrics, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("--metrics-addr: registering the worker's metrics: %v", r)
		}
	}()
	return worker.NewMetrics(prometheus.DefaultRegisterer), nil
}

// serveMetrics serves /metrics (Prometheus's default registry) and
// /healthz for a worker, and polls queue depth when poll is set. /healthz
// is 503 while the store is unreachable or the worker has a
// configuration problem, with the reason.
func serveMetrics(ctx context.Context, addr string, conn *queueconn.Connection, w *worker.Worker, m *worker.Metrics, poll bool, log zerolog.Logger) error {
	if err := serveOn(ctx, "metrics-addr", addr, prometheus.DefaultGatherer, conn.Ping, w.Health, log); err != nil {
		return err
	}
	if poll {
		go pollDepth(ctx, conn.Admin, m, log)
	}
	return nil
}

// serveOn serves g's metrics and /healthz: the store is pinged, then
// health (when given) says whether the process can do its work.
func serveOn(ctx context.Context, flag, addr string, g prometheus.Gatherer, ping func(context.Context) error, health func() error, log zerolog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, r *http.Request) {
		if err := ping(r.Context()); err != nil {
			http.Error(rw, "database unreachable", http.StatusServiceUnavailable)
			return
		}
		if health != nil {
			if err := health(); err != nil {
				http.Error(rw, "configuration problem: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = rw.Write([]byte("ok\n"))
	})
	ln, err := listen(flag, addr)
	if err != nil {
		return err
	}
	serveUntilDone(ctx, ln, mux)
	log.Info().Str("addr", ln.Addr().String()).Msg("serving metrics on /metrics")
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

// workLogger is the worker's logger as --log-format and --log-level say.
func workLogger(c *cli.Context) (zerolog.Logger, error) {
	log, err := output.BuildLogger(c.App.ErrWriter, c.String("log-format"))
	if err != nil {
		return log, err
	}
	level, err := zerolog.ParseLevel(c.String("log-level"))
	if err != nil || c.String("log-level") == "" || level > zerolog.ErrorLevel || level < zerolog.DebugLevel {
		return log, fmt.Errorf("work: --log-level %q: want debug, info, warn or error", c.String("log-level"))
	}
	return log.Level(level), nil
}

// startHeartbeat records w in the workers table and applies pauses from
// the dashboard until the returned stop is called (after Run), which
// marks the row stopped. Without counts (--heartbeat=false) it does
// nothing.
func startHeartbeat(conn *queueconn.Connection, w *worker.Worker, counts *fleet.Counts, concurrency int, log zerolog.Logger) (stop func()) {
	if counts == nil {
		return func() {}
	}
	own, err := conn.Database("the fleet's heartbeat")
	if err != nil {
		log.Warn().Err(err).Msg("the worker is not recorded in the fleet, and pauses from the dashboard do not reach it")
		return func() {}
	}
	hb := &fleet.Heartbeat{Store: own.Fleet, Worker: w, Counts: counts, Concurrency: concurrency, Version: Version, Logger: log}
	ctx, cancel := context.WithCancel(context.Background())
	hb.Start(ctx)
	done := make(chan struct{})
	go func() { hb.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}
