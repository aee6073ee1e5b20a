package bench

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/urfave/cli/v2"
)

// benchClass is the job class every benchmark job carries. The PHP side
// gets a class of that name whose handle() does nothing (written into the
// temporary copy of the Laravel app), laraworker routes it to `noop`.
const benchClass = `App\Jobs\BenchNoopJob`

const drainHelp = `Measures, on one database in one run: php artisan queue:work (1 and 2
processes, when --laravel-app names a Laravel app), laraworker work in
batched mode (concurrency 1, 16, 128) and in --laravel-exact mode, and a raw
SQL loop of the same statements (the ceiling of each mode). Each round pushes
--jobs no-op jobs in bulk and drains them with one contender; figures are
medians of the rounds with the spread (min-max). The method is written down
in docs/PERFORMANCE.md. "bench soak" measures memory over a million jobs.

--workload shared-php,delayed,no-stats,continuous runs named situations
instead (Go jobs behind a PHP-only backlog, ready jobs behind delayed ones,
a table without planner statistics, jobs arriving at a fixed rate to a
running worker), each against the same drain without the situation, with
the database server's CPU per job beside the worker's.

Tables default to laraworker_bench_jobs, laraworker_bench_failed_jobs and
laraworker_bench_job_batches; they are created, emptied and dropped at the
end. The PHP app is a copy of --laravel-app in a temporary directory with its
own .env; the original is never touched. The laraworker workers are this
program's own "work" command, run as child processes.`

// Command is `bench`: throughput against php artisan queue:work and raw
// SQL, with `bench soak` (memory over a long run) below it. It runs the
// program's own `work` command in child processes, so it belongs in an app
// built by console.New; the laraworker binary adds it, an embedding program
// may append it too.
func Command() *cli.Command {
	return &cli.Command{
		Name:        "bench",
		Usage:       "benchmark laraworker against php artisan queue:work and raw SQL on one database",
		Description: drainHelp,
		Flags: append(append(console.ConnectionFlags(),
			&cli.IntFlag{Name: "jobs", Value: 20000, Usage: "jobs per drain for laraworker and the raw loops"},
			&cli.IntFlag{Name: "php-jobs", Value: 3000, Usage: "jobs per drain for PHP workers (they are slow; the rate is what counts)"},
			&cli.IntFlag{Name: "processes", Value: 1, Usage: "laraworker processes (each with the contender's --concurrency) draining the queue together in each lw-* drain (workloads and --big-delayed too) and continuous window; CPU is their sum"},
			&cli.IntFlag{Name: "rounds", Value: 3, Usage: "rounds; figures are medians"},
			&cli.IntFlag{Name: "round-offset", Usage: "number the rounds from this + 1 (even rounds run the contenders in reverse order): for a driver that runs one round per call, as test/headline does"},
			&cli.DurationFlag{Name: "idle-time", Usage: "after the drains, measure laraworker's and (with --laravel-app) PHP's CPU per second on the empty queue at their defaults for this long each (0 skips it)"},
			&cli.DurationFlag{Name: "idle-quiet-at", Value: quietAt, Usage: "when laraworker's second idle window starts, after its start: past the minute in which its database poll is bounded by --idle-poll, after which it backs off to --sleep (the first window starts at 3s)"},
			&cli.StringFlag{Name: "only", Usage: "comma-separated contenders to run (default all): " + strings.Join(allContenderNames(), ",")},
			&cli.StringFlag{Name: "laravel-app", Usage: "`DIR` of a Laravel app to copy for the PHP contenders (without it PHP is not measured)"},
			&cli.IntFlag{Name: "latency-jobs", Value: 300, Usage: "jobs pushed one by one for the pick-up latency phase (0 skips it)"},
			&cli.IntFlag{Name: "latency-rate", Value: 100, Usage: "jobs per second pushed in the latency phase"},
			&cli.IntFlag{Name: "big-delayed", Usage: "also run the large-table scenario with this many delayed jobs (e.g. 1000000)"},
			&cli.IntFlag{Name: "big-ready", Value: 100000, Usage: "ready jobs drained in the large-table scenario"},
			&cli.DurationFlag{Name: "big-time", Value: 20 * time.Second, Usage: "longest drain in the large-table scenario (the rate counts what was drained)"},
			&cli.BoolFlag{Name: "keep-tables", Usage: "do not drop the bench tables at the end"},
			&cli.BoolFlag{Name: "json", Usage: "print the results as JSON as well"},
		), workloadFlags()...),
		Action:          console.NoArgs(runDrains),
		Subcommands:     []*cli.Command{soakCommand(), pickupCommand()},
		HideHelpCommand: true,
	}
}

// runner is one benchmark run: the database, the files the workers share
// and the contenders.
type runner struct {
	c          *cli.Context
	cfg        appconfig.Config
	q          *database.Queue
	dir        string // temp dir: .env, logs, PHP app copy
	envFile    string
	phpApp     string // the copy of --laravel-app; "" when PHP is not measured
	phpBin     string
	exe        string
	jobs       jobTemplate
	rawTx      *rawTxChoice
	contenders []contender
	workloads  []string // --workload: these instead of the contender drains
}

func runDrains(c *cli.Context) error {
	cfg, err := loadBenchConfig(c)
	if err != nil {
		return cli.Exit("bench: "+console.ErrorLine(cfg, err.Error()), 1)
	}
	b, err := newRunner(c, cfg)
	if err != nil {
		return cli.Exit("bench: "+console.ErrorLine(cfg, err.Error()), 1)
	}
	defer b.close()
	rep, err := b.run()
	if err != nil {
		return cli.Exit("bench: "+console.ErrorLine(cfg, err.Error()), 1)
	}
	rep.print(c.App.Writer)
	if c.Bool("json") {
		return console.WriteJSON(c.App.Writer, rep)
	}
	return nil
}

// loadBenchConfig is the connection the flags and .env name, with the
// bench tables unless --table and friends say otherwise. A relative SQLite
// path is made absolute: child processes read it from another directory.
func loadBenchConfig(c *cli.Context) (appconfig.Config, error) {
	overrides := console.ConnectionOverrides(c)
	for key, def := range map[string]string{"DB_QUEUE_TABLE": "laraworker_bench_jobs",
		"QUEUE_FAILED_TABLE": "laraworker_bench_failed_jobs", "QUEUE_BATCHES_TABLE": "laraworker_bench_job_batches"} {
		if _, ok := overrides[key]; !ok {
			overrides[key] = def
		}
	}
	overrides["DB_QUEUE"] = "default"
	cfg, err := console.LoadConfig(c, overrides)
	if err != nil {
		return cfg, err
	}
	if cfg.Driver == appconfig.EngineSQLite && !filepath.IsAbs(cfg.Database) {
		cfg.Database, err = filepath.Abs(cfg.Database)
	}
	return cfg, err
}

func newRunner(c *cli.Context, cfg appconfig.Config) (*runner, error) {
	b := &runner{c: c, cfg: cfg, phpBin: benchPHP(c.String("php"))}
	var err error
	if c.Int("processes") < 1 {
		return nil, fmt.Errorf("--processes %d: want 1 or more", c.Int("processes"))
	}
	if b.workloads, err = selectWorkloads(c.String("workload")); err != nil {
		return nil, err
	}
	if slices.Contains(b.workloads, wlNoStats) && cfg.Driver != appconfig.EnginePgSQL && cfg.Driver != appconfig.EngineSQLite {
		return nil, fmt.Errorf("--workload %s applies to PostgreSQL and SQLite (InnoDB keeps statistics of its own), not %s", wlNoStats, cfg.Driver)
	}
	if len(b.workloads) > 0 {
		b.contenders, err = workloadContenders(c.String("only"))
	} else {
		b.contenders, err = selectContenders(c.String("only"), c.String("laravel-app") != "")
	}
	if err != nil {
		return nil, err
	}
	if err := b.checkPHP(); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if b.dir, err = os.MkdirTemp("", "laraworker-bench-"); err != nil {
		return nil, err
	}
	if b.exe, err = workerBinary(exe, b.dir); err != nil {
		os.RemoveAll(b.dir)
		return nil, fmt.Errorf("bench: copying the worker's binary: %w", err)
	}
	if b.q, err = database.Open(c.Context, cfg, database.Options{}); err != nil {
		os.RemoveAll(b.dir)
		return nil, err
	}
	if err := b.prepare(); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// checkPHP says on stderr when PHP is not measured for want of
// --laravel-app, and fails when --laravel-app is given but cannot run.
func (b *runner) checkPHP() error {
	app := b.c.String("laravel-app")
	if app == "" && slices.Contains(b.workloads, wlContinuous) {
		console.Warn(b.c, "bench: continuous mode runs without a PHP worker beside: no --laravel-app")
	}
	if app == "" && b.c.String("only") == "" && len(b.workloads) == 0 {
		console.Warn(b.c, "bench: php artisan queue:work is not measured: no --laravel-app (the path of a Laravel app to copy, e.g. testdata/laravel in laraworker's repository)")
		return nil
	}
	if !b.wantsPHP() {
		return nil
	}
	if _, err := exec.LookPath(b.phpBin); err != nil {
		return fmt.Errorf("--php %q: %w", b.phpBin, err)
	}
	if _, err := os.Stat(filepath.Join(app, "artisan")); err != nil {
		return fmt.Errorf("--laravel-app %q is not a Laravel app: %w", app, err)
	}
	return nil
}

func (b *runner) wantsPHP() bool {
	if len(b.workloads) > 0 {
		return slices.Contains(b.workloads, wlContinuous) && b.c.String("laravel-app") != ""
	}
	return slices.ContainsFunc(b.contenders, func(ct contender) bool { return ct.php })
}

func (b *runner) prepare() error {
	ctx := b.c.Context
	_ = b.q.DropTables(ctx)
	if err := b.q.CreateTables(ctx); err != nil {
		return err
	}
	var err error
	if b.jobs, err = newJobTemplate(); err != nil {
		return err
	}
	if b.envFile, err = b.writeEnvFile(".env"); err != nil {
		return err
	}
	if !b.wantsPHP() {
		return nil
	}
	b.phpApp = filepath.Join(b.dir, "laravel")
	return copyLaravelApp(b.c.String("laravel-app"), b.phpApp, b.envFile)
}

func (b *runner) close() {
	if b.q != nil {
		if !b.c.Bool("keep-tables") {
			_ = b.q.DropTables(context.Background())
		}
		b.q.Close()
	}
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// writeEnvFile writes the .env both laraworker and the PHP copy read, so they
// use the same database and tables. It holds the password, so it is 0600
// in a private temp dir and removed at the end.
func (b *runner) writeEnvFile(name string) (string, error) {
	cfg := b.cfg
	key := make([]byte, 32) // a fresh key: no benchmark job is encrypted
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	lines := []string{
		"APP_KEY=base64:" + base64.StdEncoding.EncodeToString(key),
		"APP_ENV=production", "APP_DEBUG=false", "LOG_CHANNEL=null", "CACHE_DRIVER=array",
		"DB_CONNECTION=" + cfg.Driver, "DB_HOST=" + cfg.Host, fmt.Sprintf("DB_PORT=%d", cfg.Port),
		"DB_DATABASE=" + cfg.Database, "DB_USERNAME=" + cfg.Username, "DB_PASSWORD=" + cfg.Password.Reveal(),
		"DB_SOCKET=" + cfg.Socket, "DB_QUEUE_TABLE=" + cfg.JobsTable, "QUEUE_FAILED_TABLE=" + cfg.FailedTable,
		"QUEUE_BATCHES_TABLE=" + cfg.BatchesTable, "DB_QUEUE=default",
		fmt.Sprintf("DB_QUEUE_RETRY_AFTER=%d", cfg.RetryAfter), fmt.Sprintf("QUEUE_RETRY_AFTER=%d", cfg.RetryAfter),
	}
	if cfg.Port == 0 {
		lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "DB_PORT=") })
	}
	path := filepath.Join(b.dir, name)
	return path, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// run measures every selected contender for the given rounds, then the
// latency phase, the idle footprint and, if asked, the large table.
func (b *runner) run() (*report, error) {
	rep := &report{Driver: b.cfg.Driver, ServerVersion: b.q.ServerVersion(), Lock: b.q.LockClause(),
		Jobs: b.c.Int("jobs"), PHPJobs: b.c.Int("php-jobs"), Rounds: b.c.Int("rounds"), Started: time.Now().UTC()}
	if len(b.workloads) > 0 {
		if err := b.runWorkloads(rep, b.workloads); err != nil {
			return nil, err
		}
		rep.finish()
		return rep, nil
	}
	contenders := b.contenders
	offset := b.c.Int("round-offset")
	for round := 1 + offset; round <= rep.Rounds+offset; round++ {
		for _, ct := range alternate(contenders, round) {
			n := rep.Jobs
			if ct.php {
				n = rep.PHPJobs
			}
			m, err := b.measureDrain(ct, n)
			if err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", ct.name, round, err)
			}
			rep.add(ct.name, m)
			b.progress("round %d %-14s %8.0f jobs/s  cpu %6.1f ms/1k  rss %5.1f MB  load %.2f",
				round, ct.name, m.JobsPerSec, m.CPUPer1k, m.PeakRSSMB, m.Load1)
		}
		if n := b.c.Int("latency-jobs"); n > 0 {
			for _, ct := range contenders {
				if !ct.latency {
					continue
				}
				lat, err := b.measureLatency(ct, n, b.c.Int("latency-rate"))
				if err != nil {
					return nil, fmt.Errorf("%s latency, round %d: %w", ct.name, round, err)
				}
				rep.addLatency(ct.name, lat)
				b.progress("round %d %-14s latency p50 %.1f ms p99 %.1f ms", round, ct.name, lat.P50ms, lat.P99ms)
			}
		}
	}
	if idle, err := b.idleRSS(128); err == nil {
		rep.IdleRSSMB = idle
	} else {
		return nil, fmt.Errorf("idle footprint: %w", err)
	}
	if d := b.c.Duration("idle-time"); d > 0 {
		var err error
		if rep.IdleCPUMsPerSec, err = b.idleCPUs(d, 1+offset); err != nil {
			return nil, err
		}
	}
	if n := b.c.Int("big-delayed"); n > 0 {
		small := map[string]float64{}
		for name, cr := range rep.Results {
			small[name] = median(pluck(cr.Drains, func(m drainMeasure) float64 { return m.JobsPerSec }))
		}
		big, err := b.bigTable(n, b.c.Int("big-ready"), small)
		if err != nil {
			return nil, fmt.Errorf("large table: %w", err)
		}
		rep.Big = big
	}
	rep.finish()
	return rep, nil
}

func (b *runner) progress(format string, args ...any) {
	console.Warn(b.c, format, args...)
}

// selectContenders filters allContenders by --only (comma separated; empty
// means all) and drops the PHP ones when there is no Laravel app. Naming a
// PHP contender in --only without an app is an error, not a silent skip.
func selectContenders(only string, withPHP bool) ([]contender, error) {
	named := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			named[n] = true
		}
	}
	var out []contender
	known := map[string]bool{}
	for _, ct := range allContenders() {
		known[ct.name] = true
		switch {
		case len(named) > 0 && !named[ct.name]:
			continue
		case ct.php && !withPHP && named[ct.name]:
			return nil, fmt.Errorf("--only %s: %s needs --laravel-app (the Laravel app PHP workers run)", ct.name, ct.name)
		case ct.php && !withPHP:
			continue
		}
		out = append(out, ct)
	}
	for n := range named {
		if !known[n] {
			return nil, fmt.Errorf("unknown contender %q (want %s)", n, strings.Join(allContenderNames(), ","))
		}
	}
	return out, nil
}

// benchPHP is the php that runs artisan: --php (shared with the config
// reader), else php from PATH.
func benchPHP(flag string) string {
	if flag == "" || flag == "off" {
		return "php"
	}
	return flag
}
