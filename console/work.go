package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/dbqueue"
	"github.com/laraworker/laraworker/fleet"
	"github.com/laraworker/laraworker/handlers"
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
		Flags: append(connectionFlags(),
			&cli.StringFlag{Name: "queue", Usage: "queues in priority order, comma separated (default: the connection's default queue)"},
			&cli.StringFlag{Name: "name", Value: "default", Usage: "worker name, shown in logs"},
			durationFlag("sleep", worker.DefaultSleep, "how long to sleep when no job is available"),
			durationFlag("rest", 0, "how long to rest after each claim that found jobs"),
			&cli.BoolFlag{Name: "once", Usage: "run a single job, then stop"},
			&cli.BoolFlag{Name: "stop-when-empty", Usage: "stop when the queues are empty"},
			&cli.IntFlag{Name: "max-jobs", Usage: "stop after this many jobs (0: no limit)"},
			durationFlag("max-time", 0, "stop after this long (0: no limit)"),
			&cli.IntFlag{Name: "memory", Value: worker.DefaultMemoryMB, Usage: "stop with status 12 when RSS reaches this many MB (0: never)"},
			durationFlag("timeout", worker.DefaultTimeout, "how long a job may run when its payload sets no timeout (0: none)"),
			&cli.IntFlag{Name: "tries", Value: worker.DefaultTries, Usage: "attempts when the payload sets no maxTries (0: unlimited)"},
			&cli.StringFlag{Name: "backoff", Value: "0", Usage: "seconds before retrying a failed job when the payload sets no backoff (\"1,5,10\" allowed)"},
			&cli.IntFlag{Name: "concurrency", Value: worker.DefaultConcurrency, Usage: "jobs run at once"},
			durationFlag("grace", worker.DefaultGrace, "after a stop signal, how long running jobs may finish before they are cancelled and released"),
			durationFlag("write-grace", worker.DefaultWriteGrace, "after the worker stops, how long outcome writes that keep failing (database down) are retried before they are dropped (exit status 75; the jobs run again after retry_after); a stop signal makes the worker exit within --grace + --write-grace"),
			&cli.BoolFlag{Name: "laravel-exact", Usage: "claim one job per transaction and delete jobs one by one, exactly as Laravel does"},
			&cli.StringFlag{Name: "unrouted", Value: string(worker.UnroutedSkip), Usage: "jobs without a handler: skip (never reserve them) or fail"},
			&cli.StringSliceFlag{Name: "pass-env", Usage: "`NAME` of a variable exec handlers get although it is withheld (DB_*, APP_*, REDIS_*, CACHE_*, QUEUE_*, LARAWORKER_* are, by default; repeatable)"},
			&cli.StringSliceFlag{Name: "route", EnvVars: []string{"LARAWORKER_ROUTES"}, Usage: "`CLASS=HANDLER` with HANDLER noop, log or exec:COMMAND (repeatable)"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus /metrics and /healthz on `PORT or HOST:PORT` (a bare port binds 127.0.0.1)"},
			&cli.StringFlag{Name: "pprof-addr", Usage: "serve Go's pprof profiles (/debug/pprof/) on `PORT or HOST:PORT` (a bare port binds 127.0.0.1; off by default)"},
			laravelVersionFlag(),
			&cli.StringFlag{Name: "log-level", Value: "info", EnvVars: []string{"LARAWORKER_LOG_LEVEL"}, Usage: "`LEVEL`: debug (every job's start too), info (every job's end), warn, error"},
			&cli.StringFlag{Name: "log-format", Value: "auto", Usage: "json, text, or auto (text on a terminal, JSON otherwise)"},
			&cli.BoolFlag{Name: "create-tables", Usage: "create the jobs, failed_jobs and job_batches tables if missing"},
			&cli.BoolFlag{Name: "heartbeat", Value: true, Usage: "record this worker in laraworker_workers (the dashboard's fleet) and obey pauses set from the dashboard (--heartbeat=false: neither)"},
			&cli.StringFlag{Name: "dashboard-addr", Usage: "serve the web dashboard on `PORT or HOST:PORT` (see `laraworker dashboard --help`)"},
			dashboardFlags("dashboard-")[0], dashboardFlags("dashboard-")[1],
		),
		Action: noArgs(func(c *cli.Context) error { return runWork(c, reg) }),
	}
}

func runWork(c *cli.Context, reg *handlers.Registry) error {
	log, err := workLogger(c)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if err := addRoutes(reg, c.StringSlice("route"), c.StringSlice("pass-env"), log); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	unrouted, err := worker.ParseUnrouted(c.String("unrouted"))
	if err != nil {
		return usageError("work: %v", err)
	}
	if v := c.String("laravel-version"); v != "" && !appconfig.ValidVersion(v) {
		return usageError("work: --laravel-version %q: want a version such as 8.83 or 12.67", v)
	}
	if c.Int("concurrency") < 1 {
		return usageError("work: --concurrency must be at least 1")
	}
	if len(reg.Names()) == 0 && unrouted != worker.UnroutedFail {
		return cli.Exit("work: no handlers: register some in your program or pass --route 'App\\Jobs\\X=noop'", 1)
	}
	cfg, info, err := loadAppConfig(c, connectionOverrides(c))
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	logAppConfig(log, cfg, info)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	defer stop()
	q, err := dbqueue.Open(ctx, cfg, dbqueue.Options{ExactStatements: c.Bool("laravel-exact")})
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer q.Close()
	if c.Bool("create-tables") {
		if err := q.CreateTables(ctx); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	wcfg := workConfig(c, unrouted)
	wcfg.Queues = effectiveQueues(wcfg.Queues, cfg.DefaultQueue)
	if err := checkSetup(ctx, q, info, wcfg.Queues, reg, log); err != nil {
		return cli.Exit("work: "+err.Error(), 1)
	}
	if !c.IsSet("laravel-version") && info.Version != "" {
		wcfg.LaravelVersion = info.Version // failed_jobs texts of the app's version
	}
	enc, err := encrypterFor(cfg)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if addr := c.String("pprof-addr"); addr != "" {
		if err := servePprof(ctx, addr, log); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	wcfg.Logger, wcfg.Encrypter = log, enc
	wcfg.App = &handlers.App{Config: cfg, DB: q.DB()}
	closeLocks := lockStores(&wcfg, q, cfg, log)
	defer closeLocks()
	metricsAddr := c.String("metrics-addr")
	if metricsAddr != "" {
		if wcfg.Metrics, err = workerMetrics(); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	var counts *fleet.Counts
	if c.Bool("heartbeat") {
		counts = fleet.NewCounts(nil)
		wcfg.Written = counts.Written
	}
	w, err := worker.New(q, reg, wcfg)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	dashboardAddr := c.String("dashboard-addr")
	if metricsAddr != "" {
		// A dashboard feeds the depth gauges from its snapshot, without the
		// full-table count pollDepth runs.
		if err := serveMetrics(ctx, metricsAddr, q, w, wcfg.Metrics, dashboardAddr == "", log); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	if dashboardAddr != "" {
		setup := dashboardSetup{addr: dashboardAddr, flag: "dashboard-addr", readOnly: c.Bool("dashboard-read-only"), hidePayloads: c.Bool("dashboard-hide-payloads")}
		if wcfg.Metrics != nil {
			setup.metrics = worker.NewQueueMetrics(prometheus.DefaultRegisterer, wcfg.Metrics.Depth)
		}
		if _, err := startDashboard(ctx, q, cfg, setup, log); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	go pauseOnSignals(ctx, w)
	claimPath := detectClaimPath(ctx, q, c.Bool("laravel-exact"), log)
	log.Info().Str("worker", wcfg.Name).Strs("queues", wcfg.Queues).Strs("routes", reg.Names()).Int("concurrency", c.Int("concurrency")).
		Str("config", info.Source).Str("driver", cfg.Driver).Str("lock", q.LockClause()).Str("claim", claimPath).Msg("worker started")
	stopHeartbeat := func() {}
	if c.Bool("heartbeat") {
		stopHeartbeat = startHeartbeat(q, w, counts, c.Int("concurrency"), log)
	}
	reason := w.Run(ctx)
	stopHeartbeat()
	st := w.Stats()
	code := worker.ExitCode(reason, st)
	stopped := log.Info()
	switch {
	case st.Dropped > 0:
		stopped = log.Error()
	case reason == worker.StopMemory:
		stopped = log.Warn().Str("memory", fmt.Sprintf("RSS reached --memory %d MB", c.Int("memory")))
	}
	stopped.Str("worker", wcfg.Name).Str("reason", string(reason)).Int64("claimed", st.Claimed).Int64("done", st.Done).
		Int64("failed", st.Failed).Int64("released", st.Released).Int64("returned", st.Returned).
		Int64("lost", st.Lost).Int64("dropped", st.Dropped).Int64("interrupted", st.Interrupted).Int("exit", code).Msg("worker stopped")
	if code != 0 {
		return cli.Exit("", code)
	}
	return nil
}

// workConfig maps artisan's flags onto worker.Config: where a flag's 0
// means "none" (--sleep, --timeout, --tries, --memory), the Config takes a
// negative value, because its 0 means "the default".
func workConfig(c *cli.Context, unrouted worker.Unrouted) worker.Config {
	return worker.Config{
		Queues:         worker.ParseQueues(c.String("queue")),
		Name:           c.String("name"),
		Sleep:          orNone(durationOf(c, "sleep")),
		Rest:           durationOf(c, "rest"),
		Once:           c.Bool("once"),
		StopWhenEmpty:  c.Bool("stop-when-empty"),
		MaxJobs:        c.Int("max-jobs"),
		MaxTime:        durationOf(c, "max-time"),
		MemoryMB:       orNone(c.Int("memory")),
		Timeout:        orNone(durationOf(c, "timeout")),
		Tries:          orNone(c.Int("tries")),
		Backoff:        c.String("backoff"),
		Concurrency:    c.Int("concurrency"),
		Grace:          orNone(durationOf(c, "grace")),
		WriteGrace:     orNone(durationOf(c, "write-grace")),
		LaravelExact:   c.Bool("laravel-exact"),
		Unrouted:       unrouted,
		LaravelVersion: c.String("laravel-version"),
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
// is 503 while the database is unreachable or the worker has a
// configuration problem, with the reason.
func serveMetrics(ctx context.Context, addr string, q *dbqueue.Queue, w *worker.Worker, m *worker.Metrics, poll bool, log zerolog.Logger) error {
	if err := serveOn(ctx, "metrics-addr", addr, prometheus.DefaultGatherer, q, w.Health, log); err != nil {
		return err
	}
	if poll {
		go pollDepth(ctx, q, m, log)
	}
	return nil
}

// serveRegistryOn serves reg on /metrics and a database check on /healthz
// (the dashboard command's metrics).
func serveRegistryOn(ctx context.Context, flag, addr string, reg *prometheus.Registry, q *dbqueue.Queue, log zerolog.Logger) error {
	return serveOn(ctx, flag, addr, reg, q, nil, log)
}

// serveOn serves g's metrics and /healthz: the database is pinged, then
// health (when given) says whether the process can do its work.
func serveOn(ctx context.Context, flag, addr string, g prometheus.Gatherer, q *dbqueue.Queue, health func() error, log zerolog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, r *http.Request) {
		if err := q.DB().PingContext(r.Context()); err != nil {
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

func pollDepth(ctx context.Context, q *dbqueue.Queue, m *worker.Metrics, log zerolog.Logger) {
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

// newLogger logs JSON when stderr is not a terminal, readable text on one.
func newLogger(c *cli.Context) zerolog.Logger {
	log, _ := buildLogger(c.App.ErrWriter, "auto")
	return log
}

// workLogger is the worker's logger as --log-format and --log-level say.
func workLogger(c *cli.Context) (zerolog.Logger, error) {
	log, err := buildLogger(c.App.ErrWriter, c.String("log-format"))
	if err != nil {
		return log, err
	}
	level, err := zerolog.ParseLevel(c.String("log-level"))
	if err != nil || c.String("log-level") == "" || level > zerolog.ErrorLevel || level < zerolog.DebugLevel {
		return log, fmt.Errorf("work: --log-level %q: want debug, info, warn or error", c.String("log-level"))
	}
	return log.Level(level), nil
}

// buildLogger writes JSON lines, or readable text (format "text", or
// "auto" on a terminal).
func buildLogger(out io.Writer, format string) (zerolog.Logger, error) {
	if out == nil {
		out = os.Stderr
	}
	text := false
	switch format {
	case "json":
	case "text":
		text = true
	case "auto":
		if f, ok := out.(*os.File); ok {
			st, err := f.Stat()
			text = err == nil && st.Mode()&os.ModeCharDevice != 0
		}
	default:
		return zerolog.Nop(), fmt.Errorf("work: --log-format %q: want json, text or auto", format)
	}
	if text {
		out = zerolog.ConsoleWriter{Out: out, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(out).With().Timestamp().Logger(), nil
}

// startHeartbeat records w in the workers table and applies pauses from
// the dashboard until the returned stop is called (after Run), which
// marks the row stopped.
func startHeartbeat(q *dbqueue.Queue, w *worker.Worker, counts *fleet.Counts, concurrency int, log zerolog.Logger) (stop func()) {
	hb := &fleet.Heartbeat{Store: fleetStore(q), Worker: w, Counts: counts, Concurrency: concurrency, Version: Version, Logger: log}
	ctx, cancel := context.WithCancel(context.Background())
	hb.Start(ctx)
	done := make(chan struct{})
	go func() { hb.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}
