package console

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/fleet"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel"
	"github.com/laraworker/laraworker/worker"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
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
			&cli.Float64Flag{Name: "sleep", Value: worker.DefaultSleep.Seconds(), Usage: "seconds to sleep when no job is available"},
			&cli.Float64Flag{Name: "rest", Value: 0, Usage: "seconds to rest after each claim that found jobs"},
			&cli.BoolFlag{Name: "once", Usage: "run a single job, then stop"},
			&cli.BoolFlag{Name: "stop-when-empty", Usage: "stop when the queues are empty"},
			&cli.IntFlag{Name: "max-jobs", Usage: "stop after this many jobs (0: no limit)"},
			&cli.IntFlag{Name: "max-time", Usage: "stop after this many seconds (0: no limit)"},
			&cli.IntFlag{Name: "memory", Value: worker.DefaultMemoryMB, Usage: "stop with status 12 when RSS reaches this many MB (0: never)"},
			&cli.IntFlag{Name: "timeout", Value: int(worker.DefaultTimeout.Seconds()), Usage: "seconds a job may run when its payload sets no timeout (0: none)"},
			&cli.IntFlag{Name: "tries", Value: worker.DefaultTries, Usage: "attempts when the payload sets no maxTries (0: unlimited)"},
			&cli.StringFlag{Name: "backoff", Value: "0", Usage: "seconds before retrying a failed job when the payload sets no backoff (\"1,5,10\" allowed)"},
			&cli.IntFlag{Name: "concurrency", Value: worker.DefaultConcurrency, Usage: "jobs run at once"},
			&cli.DurationFlag{Name: "grace", Value: worker.DefaultGrace, Usage: "after a stop signal, how long running jobs may finish before they are cancelled and released"},
			&cli.BoolFlag{Name: "laravel-exact", Usage: "claim one job per transaction and delete jobs one by one, exactly as Laravel does"},
			&cli.StringFlag{Name: "unrouted", Value: string(worker.UnroutedSkip), Usage: "jobs without a handler: skip (never reserve them) or fail"},
			&cli.StringSliceFlag{Name: "route", EnvVars: []string{"LARAWORKER_ROUTES"}, Usage: "`CLASS=HANDLER` with HANDLER noop, log or exec:COMMAND (repeatable)"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus /metrics and /healthz on `PORT or HOST:PORT` (a bare port binds 127.0.0.1)"},
			&cli.StringFlag{Name: "pprof-addr", Usage: "serve Go's pprof profiles (/debug/pprof/) on `PORT or HOST:PORT` (a bare port binds 127.0.0.1; off by default)"},
			&cli.StringFlag{Name: "laravel-version", EnvVars: []string{"LARAWORKER_LARAVEL_VERSION"}, Usage: "the app's Laravel version (e.g. 8.83): failed_jobs gets that version's exception texts (default: 10.10+ texts)"},
			&cli.BoolFlag{Name: "create-tables", Usage: "create the jobs, failed_jobs and job_batches tables if missing"},
			&cli.BoolFlag{Name: "heartbeat", Value: true, Usage: "record this worker in laraworker_workers (the dashboard's fleet) and obey pauses set from the dashboard (--heartbeat=false: neither)"},
			&cli.StringFlag{Name: "dashboard-addr", Usage: "serve the web dashboard on `PORT or HOST:PORT` (see `laraworker dashboard --help`)"},
			dashboardFlags("dashboard-")[0], dashboardFlags("dashboard-")[1],
		),
		Action: func(c *cli.Context) error { return runWork(c, reg) },
	}
}

func runWork(c *cli.Context, reg *handlers.Registry) error {
	log := newLogger(c).With().Str("worker", c.String("name")).Logger()
	if err := addRoutes(reg, c.StringSlice("route"), log); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	unrouted, err := worker.ParseUnrouted(c.String("unrouted"))
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if c.Int("concurrency") < 1 {
		return cli.Exit("work: --concurrency must be at least 1", 1)
	}
	if len(reg.Names()) == 0 && unrouted != worker.UnroutedFail {
		return cli.Exit("work: no handlers: register some in your program or pass --route 'App\\Jobs\\X=noop'", 1)
	}
	cfg, err := loadConfig(c, connectionOverrides(c))
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	defer stop()
	var openOpts []laravel.Option
	if c.Bool("laravel-exact") {
		openOpts = append(openOpts, laravel.WithExactStatements())
	}
	q, err := laravel.Open(ctx, cfg, openOpts...)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer q.Close()
	if c.Bool("create-tables") {
		if err := q.CreateTables(ctx); err != nil {
			return cli.Exit(err.Error(), 1)
		}
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
	var metrics *worker.Metrics
	var promReg *prometheus.Registry
	if addr := c.String("metrics-addr"); addr != "" {
		if metrics, promReg, err = serveMetrics(ctx, addr, q, log); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	if addr := c.String("dashboard-addr"); addr != "" {
		setup := dashboardSetup{addr: addr, flag: "dashboard-addr", readOnly: c.Bool("dashboard-read-only"), hidePayloads: c.Bool("dashboard-hide-payloads")}
		if metrics != nil {
			// The dashboard's snapshot feeds the depth gauges, without the
			// full-table count pollDepth runs.
			setup.metrics = worker.NewQueueMetrics(promReg, metrics.Depth)
		}
		if _, err := startDashboard(ctx, q, cfg, setup, log); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	} else if metrics != nil {
		go pollDepth(ctx, q, metrics, log)
	}
	wcfg := workConfig(c, unrouted)
	if len(wcfg.Queues) == 0 {
		wcfg.Queues = []string{cfg.DefaultQueue}
	}
	wcfg.Logger, wcfg.Encrypter, wcfg.Metrics = log, enc, metrics
	var store worker.Store = q
	var counts *fleet.Counts
	if c.Bool("heartbeat") {
		store, counts = countingStore(q, &wcfg)
	}
	w, err := worker.New(store, reg, wcfg)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	go pauseOnSignals(ctx, w)
	log.Info().Str("driver", cfg.Driver).Str("lock", q.LockClause()).Strs("classes", reg.Names()).
		Int("concurrency", c.Int("concurrency")).Msg("worker started")
	stopHeartbeat := func() {}
	if c.Bool("heartbeat") {
		stopHeartbeat = startHeartbeat(q, w, counts, c.Int("concurrency"), log)
	}
	reason := w.Run(ctx)
	stopHeartbeat()
	st := w.Stats()
	log.Info().Str("reason", string(reason)).Int64("claimed", st.Claimed).Int64("done", st.Done).
		Int64("failed", st.Failed).Int64("released", st.Released).Int64("returned", st.Returned).Msg("worker stopped")
	if code := reason.ExitCode(); code != 0 {
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
		Sleep:          orNone(seconds(c.Float64("sleep"))),
		Rest:           seconds(c.Float64("rest")),
		Once:           c.Bool("once"),
		StopWhenEmpty:  c.Bool("stop-when-empty"),
		MaxJobs:        c.Int("max-jobs"),
		MaxTime:        time.Duration(c.Int("max-time")) * time.Second,
		MemoryMB:       orNone(c.Int("memory")),
		Timeout:        orNone(time.Duration(c.Int("timeout")) * time.Second),
		Tries:          orNone(c.Int("tries")),
		Backoff:        c.String("backoff"),
		Concurrency:    c.Int("concurrency"),
		Grace:          orNone(c.Duration("grace")),
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

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// addRoutes registers built-in handlers from --route CLASS=HANDLER.
func addRoutes(reg *handlers.Registry, routes []string, log zerolog.Logger) error {
	for _, r := range routes {
		for _, one := range splitRoutes(r) {
			class, spec, ok := strings.Cut(one, "=")
			if !ok || class == "" || spec == "" {
				return errors.New("work: --route wants CLASS=HANDLER, got " + one)
			}
			h, err := handlers.Builtin(spec, log)
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

func pauseOnSignals(ctx context.Context, w *worker.Worker) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGUSR2, syscall.SIGCONT)
	defer signal.Stop(ch)
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-ch:
			if s == syscall.SIGUSR2 {
				w.Pause()
			} else {
				w.Resume()
			}
		}
	}
}

// serveMetrics serves the worker's metrics on /metrics and /healthz.
func serveMetrics(ctx context.Context, addr string, q *laravel.Queue, log zerolog.Logger) (*worker.Metrics, *prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := worker.NewMetrics(reg)
	if err := serveRegistryOn(ctx, "metrics-addr", addr, reg, q, log); err != nil {
		return nil, nil, err
	}
	return m, reg, nil
}

// serveRegistryOn serves reg on /metrics and a database check on /healthz.
func serveRegistryOn(ctx context.Context, flag, addr string, reg *prometheus.Registry, q *laravel.Queue, log zerolog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := q.DB().PingContext(r.Context()); err != nil {
			http.Error(w, "database unreachable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	ln, err := listen(flag, addr)
	if err != nil {
		return err
	}
	serveUntilDone(ctx, ln, mux)
	log.Info().Str("addr", ln.Addr().String()).Msg("serving metrics on /metrics")
	return nil
}

func pollDepth(ctx context.Context, q *laravel.Queue, m *worker.Metrics, log zerolog.Logger) {
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
	out := c.App.ErrWriter
	if out == nil {
		out = os.Stderr
	}
	if f, ok := out.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return zerolog.New(zerolog.ConsoleWriter{Out: f, TimeFormat: time.TimeOnly}).With().Timestamp().Logger()
		}
	}
	return zerolog.New(out).With().Timestamp().Logger()
}

// countingStore wraps q to count outcomes per class for the history
// table. The wrapper hides q's optional interfaces from the worker, so
// the batch repository and shared cache are given in cfg.
func countingStore(q *laravel.Queue, cfg *worker.Config) (worker.Store, *fleet.Counts) {
	cfg.Batches = q
	if c := q.Cache(); c != nil {
		cfg.Cache = c
	}
	counts := fleet.NewCounts(nil)
	return fleet.NewCountingStore(q, counts), counts
}

// startHeartbeat records w in the workers table and applies pauses from
// the dashboard until the returned stop is called (after Run), which
// marks the row stopped.
func startHeartbeat(q *laravel.Queue, w *worker.Worker, counts *fleet.Counts, concurrency int, log zerolog.Logger) (stop func()) {
	hb := &fleet.Heartbeat{Store: fleet.ForQueue(q), Worker: w, Counts: counts, Concurrency: concurrency, Version: Version, Logger: log}
	ctx, cancel := context.WithCancel(context.Background())
	hb.Start(ctx)
	done := make(chan struct{})
	go func() { hb.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}
