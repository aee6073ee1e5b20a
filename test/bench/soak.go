package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/console"
	"github.com/urfave/cli/v2"
)

const soakHelp = `Runs ONE worker inside this process (the library's worker.New and Run, the
noop handler, --concurrency 64) while a producer pushes no-op jobs at a
steady --rate until --jobs were pushed; then the worker drains the queue and
stops. After a warm-up of --warm-up jobs ("start"), every --every jobs and
once the queue is drained ("end", the worker still running) it samples the
live heap after a forced GC (runtime.GC twice, then MemStats.HeapAlloc), the
RSS (/proc/self/statm), the goroutines, the jobs claimed and handled and the
backlog (rows in the jobs table).

It fails (exit status 1) when a job was lost, failed or ran twice, when the
live heap grew by more than --max-heap-growth from "start" to "end", or when
goroutines are left over once the worker and its connections are closed.
If the producer falls behind its schedule or the backlog keeps growing, the
rate was not held: the report says so; lower --rate. The method is in
docs/PERFORMANCE.md, "Memory over a million jobs".

Tables default to the bench tables (laraworker_bench_jobs, ...), created
and dropped at the end.`

func soakCommand() *cli.Command {
	return &cli.Command{
		Name:        "soak",
		Usage:       "run one in-process worker over a long steady stream of no-op jobs and check that its memory stays flat",
		Description: soakHelp,
		Flags: append(console.ConnectionFlags(),
			&cli.IntFlag{Name: "jobs", Value: 1_000_000, Usage: "jobs to push in all"},
			&cli.IntFlag{Name: "rate", Value: 2000, Usage: "jobs pushed per second"},
			&cli.IntFlag{Name: "every", Value: 100_000, Usage: "jobs handled between two samples"},
			&cli.IntFlag{Name: "warm-up", Value: 10_000, Usage: "jobs handled before the first sample"},
			&cli.IntFlag{Name: "concurrency", Value: 64, Usage: "the worker's --concurrency"},
			&cli.Float64Flag{Name: "sleep", Value: 0.1, Usage: "the worker's --sleep: seconds to wait when no job is available (short, so the backlog stays small at a steady rate; work's default is 3)"},
			&cli.StringFlag{Name: "max-heap-growth", Value: "4MiB", Usage: "fail when the live heap grows by more than this (`SIZE`: bytes, or with KiB, MiB, GiB)"},
			&cli.DurationFlag{Name: "drain-timeout", Value: time.Minute, Usage: "after the last push, give up when no job was handled for this long"},
			&cli.StringFlag{Name: "heap-profile", Usage: "write a heap profile at every sample to `DIR`/heap-<sample>.pprof (compare two with go tool pprof -base)"},
			&cli.BoolFlag{Name: "keep-tables", Usage: "do not drop the bench tables at the end"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON instead of tables"},
		),
		Action: console.NoArgs(runSoak),
	}
}

// soakOptions are the soak's flags, checked.
type soakOptions struct {
	jobs, rate, every, warmUp, concurrency int
	sleep                                  time.Duration
	maxHeapGrowth                          int64
	drainTimeout                           time.Duration
	keepTables                             bool
	heapProfiles                           string // directory, "" for none
}

func soakOptionsFrom(c *cli.Context) (soakOptions, error) {
	o := soakOptions{
		jobs: c.Int("jobs"), rate: c.Int("rate"), every: c.Int("every"), warmUp: c.Int("warm-up"),
		concurrency: c.Int("concurrency"), sleep: time.Duration(c.Float64("sleep") * float64(time.Second)),
		drainTimeout: c.Duration("drain-timeout"), keepTables: c.Bool("keep-tables"),
		heapProfiles: c.String("heap-profile"),
	}
	var err error
	if o.maxHeapGrowth, err = parseSize(c.String("max-heap-growth")); err != nil {
		return o, fmt.Errorf("--max-heap-growth: %w", err)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"jobs", o.jobs}, {"rate", o.rate}, {"every", o.every}, {"concurrency", o.concurrency}} {
		if f.v <= 0 {
			return o, fmt.Errorf("--%s must be positive, got %d", f.name, f.v)
		}
	}
	switch {
	case o.warmUp < 0 || o.warmUp >= o.jobs:
		return o, fmt.Errorf("--warm-up %d must be at least 0 and less than --jobs %d", o.warmUp, o.jobs)
	case o.sleep < 0:
		return o, errors.New("--sleep must not be negative")
	case o.drainTimeout <= 0:
		return o, errors.New("--drain-timeout must be positive")
	}
	if o.heapProfiles != "" {
		if st, err := os.Stat(o.heapProfiles); err != nil || !st.IsDir() {
			return o, fmt.Errorf("--heap-profile %q is not a directory", o.heapProfiles)
		}
	}
	return o, nil
}

// parseSize reads "4194304", "512KiB", "4MiB" or "1GiB".
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%q is not a size (want bytes, or a number with KiB, MiB or GiB)", s)
	}
	return int64(f * float64(mult)), nil
}

func runSoak(c *cli.Context) error {
	opts, err := soakOptionsFrom(c)
	if err != nil {
		return cli.Exit("bench soak: "+err.Error(), 2)
	}
	cfg, err := loadBenchConfig(c)
	if err != nil {
		return cli.Exit("bench soak: "+console.ErrorLine(cfg, err.Error()), 1)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := soak(ctx, cfg, opts, stderrOf(c))
	if err != nil {
		return cli.Exit("bench soak: "+console.ErrorLine(cfg, err.Error()), 1)
	}
	if c.Bool("json") {
		err = console.WriteJSON(c.App.Writer, rep)
	} else {
		rep.print(c.App.Writer)
	}
	if err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return cli.Exit("bench soak: "+console.ErrorLine(cfg, strings.Join(rep.Problems, "; ")), 1)
	}
	return nil
}

// stderrOf is where progress and the worker's warnings go.
func stderrOf(c *cli.Context) io.Writer {
	if c.App.ErrWriter != nil {
		return c.App.ErrWriter
	}
	return os.Stderr
}
