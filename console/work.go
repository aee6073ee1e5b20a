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
	d := worker.DefaultOptions()
	return &cli.Command{
		Name:  "work",
		Usage: "run jobs that have Go handlers, like `php artisan queue:work`",
		Flags: append(connectionFlags(),
			&cli.StringFlag{Name: "queue", Usage: "queues in priority order, comma separated (default: the connection's default queue)"},
			&cli.StringFlag{Name: "name", Value: d.Name, Usage: "worker name, shown in logs"},
			&cli.Float64Flag{Name: "sleep", Value: d.Sleep.Seconds(), Usage: "seconds to sleep when no job is available"},
			&cli.Float64Flag{Name: "rest", Value: 0, Usage: "seconds to rest after each claim that found jobs"},
			&cli.BoolFlag{Name: "once", Usage: "run a single job, then stop"},
			&cli.BoolFlag{Name: "stop-when-empty", Usage: "stop when the queues are empty"},
			&cli.IntFlag{Name: "max-jobs", Usage: "stop after this many jobs (0: no limit)"},
			&cli.IntFlag{Name: "max-time", Usage: "stop after this many seconds (0: no limit)"},
			&cli.IntFlag{Name: "memory", Value: d.MemoryMB, Usage: "stop with status 12 when RSS reaches this many MB (0: never)"},
			&cli.IntFlag{Name: "timeout", Value: int(d.Timeout.Seconds()), Usage: "seconds a job may run when its payload sets no timeout (0: none)"},
			&cli.IntFlag{Name: "tries", Value: d.Tries, Usage: "attempts when the payload sets no maxTries (0: unlimited)"},
			&cli.StringFlag{Name: "backoff", Value: d.Backoff, Usage: "seconds before retrying a failed job when the payload sets no backoff (\"1,5,10\" allowed)"},
			&cli.IntFlag{Name: "concurrency", Value: d.Concurrency, Usage: "jobs run at once"},
			&cli.DurationFlag{Name: "grace", Value: d.Grace, Usage: "after a stop signal, how long running jobs may finish before they are cancelled and released"},
			&cli.BoolFlag{Name: "laravel-exact", Usage: "claim one job per transaction and delete jobs one by one, exactly as Laravel does"},
			&cli.StringFlag{Name: "unrouted", Value: d.Unrouted, Usage: "jobs without a handler: skip (never reserve them) or fail"},
			&cli.StringSliceFlag{Name: "route", EnvVars: []string{"LARAWORKER_ROUTES"}, Usage: "`CLASS=HANDLER` with HANDLER noop, log or exec:COMMAND (repeatable)"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus /metrics and /healthz on `PORT or HOST:PORT` (a bare port binds 127.0.0.1)"},
			&cli.StringFlag{Name: "pprof-addr", Usage: "serve Go's pprof profiles (/debug/pprof/) on `PORT or HOST:PORT` (a bare port binds 127.0.0.1; off by default)"},
			&cli.StringFlag{Name: "laravel-version", EnvVars: []string{"LARAWORKER_LARAVEL_VERSION"}, Usage: "the app's Laravel version (e.g. 8.83): failed_jobs gets that version's exception texts (default: 10.10+ texts)"},
			&cli.BoolFlag{Name: "create-tables", Usage: "create the jobs, failed_jobs and job_batches tables if missing"},
		),
		Action: func(c *cli.Context) error { return runWork(c, reg) },
	}
}

func runWork(c *cli.Context, reg *handlers.Registry) error {
	log := newLogger(c).With().Str("worker", c.String("name")).Logger()
	if err := addRoutes(reg, c.StringSlice("route"), log); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if len(reg.Names()) == 0 && c.String("unrouted") != worker.UnroutedFail {
		return cli.Exit("work: no handlers: register some in your program or pass --route 'App\\Jobs\\X=noop'", 1)
	}
	cfg, info, err := loadAppConfig(c, connectionOverrides(c))
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	logAppConfig(log, cfg, info)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	defer stop()
	q, err := laravel.Open(ctx, cfg)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer q.Close()
	if c.Bool("create-tables") {
		if err := q.CreateTables(ctx); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	opts := workOptions(c)
	queues := effectiveQueues(opts.Queues, cfg.DefaultQueue)
	if err := checkSetup(ctx, q, info, queues, reg.Names(), log); err != nil {
		return cli.Exit("work: "+err.Error(), 1)
	}
	if !c.IsSet("laravel-version") && info.Version != "" {
		opts.LaravelVersion = info.Version // failed_jobs texts of the app's version
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
	if addr := c.String("metrics-addr"); addr != "" {
		if metrics, err = serveMetrics(ctx, addr, q, log); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	w, err := worker.New(q, reg, enc, opts, log, metrics)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	go pauseOnSignals(ctx, w)
	log.Info().Strs("queues", queues).Strs("routes", reg.Names()).Int("concurrency", c.Int("concurrency")).
		Str("config", info.Source).Str("driver", cfg.Driver).Str("lock", q.LockClause()).Msg("worker started")
	reason := w.Run(ctx)
	log.Info().Str("reason", string(reason)).Int64("jobs", w.Processed()).Msg("worker stopped")
	if code := reason.ExitCode(); code != 0 {
		return cli.Exit("", code)
	}
	return nil
}

func workOptions(c *cli.Context) worker.Options {
	o := worker.DefaultOptions()
	o.Queues = worker.ParseQueues(c.String("queue"))
	o.Name = c.String("name")
	o.Sleep = seconds(c.Float64("sleep"))
	o.Rest = seconds(c.Float64("rest"))
	o.Once = c.Bool("once")
	o.StopWhenEmpty = c.Bool("stop-when-empty")
	o.MaxJobs = c.Int("max-jobs")
	o.MaxTime = time.Duration(c.Int("max-time")) * time.Second
	o.MemoryMB = c.Int("memory")
	o.Timeout = time.Duration(c.Int("timeout")) * time.Second
	o.Tries = c.Int("tries")
	o.Backoff = c.String("backoff")
	o.Concurrency = c.Int("concurrency")
	o.Grace = c.Duration("grace")
	o.LaravelExact = c.Bool("laravel-exact")
	o.Unrouted = c.String("unrouted")
	o.LaravelVersion = c.String("laravel-version")
	return o
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

// serveMetrics serves /metrics and /healthz and polls queue depth.
func serveMetrics(ctx context.Context, addr string, q *laravel.Queue, log zerolog.Logger) (*worker.Metrics, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := worker.NewMetrics(reg)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := q.DB().PingContext(r.Context()); err != nil {
			http.Error(w, "database unreachable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	ln, err := listen("metrics-addr", addr)
	if err != nil {
		return nil, err
	}
	serveUntilDone(ctx, ln, mux)
	go pollDepth(ctx, q, m, log)
	return m, nil
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
