package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/console"
	"github.com/urfave/cli/v2"
)

// The named workloads of `bench --workload`: each drains the same jobs
// twice per round, once in the situation it names and once without it,
// and reports the ratio round by round (both in the same round, so a slow
// phase of a shared machine hits both).
const (
	wlSharedPHP  = "shared-php" // Go jobs queued behind a backlog of PHP-only jobs
	wlDelayed    = "delayed"    // ready jobs behind (newer than) many delayed ones
	wlNoStats    = "no-stats"   // a fresh table the planner has no statistics for
	wlContinuous = "continuous" // jobs arriving at a fixed rate to a running worker
)

var workloadNames = []string{wlSharedPHP, wlDelayed, wlNoStats, wlContinuous}

func workloadFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "workload", Usage: "run these named workloads instead of the contender drains (comma separated): " + strings.Join(workloadNames, ",") +
			"; they use the laraworker or raw contenders of --only (default lw-c128)"},
		&cli.IntFlag{Name: "shared-jobs", Value: 5000, Usage: "shared-php: Go jobs drained, queued behind the PHP backlog"},
		&cli.IntFlag{Name: "php-backlog", Value: 50000, Usage: "shared-php: PHP-only jobs (a class laraworker has no handler for) older than the Go jobs on the same queue"},
		&cli.IntFlag{Name: "delayed-rows", Value: 1000000, Usage: "delayed: delayed jobs (available in 24 h) with lower ids than the ready ones"},
		&cli.IntFlag{Name: "ready-rows", Value: 100000, Usage: "delayed: ready jobs drained"},
		&cli.DurationFlag{Name: "drain-time", Value: time.Minute, Usage: "shared-php, delayed, no-stats: longest drain of the workload's jobs (stopped with --max-time; the rate counts what was drained)"},
		&cli.BoolFlag{Name: "claim-index", Usage: "delayed, shared-php: create laraworker's opt-in claim index (laraworker tables --index) on the bench tables first; dropped at the end"},
		&cli.IntFlag{Name: "rate", Value: 500, Usage: "continuous: Go jobs pushed per second"},
		&cli.DurationFlag{Name: "duration", Value: time.Minute, Usage: "continuous: how long jobs arrive"},
		&cli.IntFlag{Name: "php-rate", Value: 50, Usage: "continuous: PHP-only jobs pushed per second for a php artisan queue:work beside (with --laravel-app)"},
		&cli.DurationFlag{Name: "daemon-sleep", Usage: "continuous: --sleep of both workers, 0 for none (default: their own default, 3 s)"},
	}
}

// workloadResult is one workload for one contender over the rounds.
type workloadResult struct {
	Workload  string `json:"workload"`
	Contender string `json:"contender"`
	// Setup says what the two drains of a round were, e.g. "5000 Go jobs
	// behind 50000 PHP-only jobs" and "5000 Go jobs alone".
	Setup    string          `json:"setup"`
	Baseline string          `json:"baseline"`
	Index    string          `json:"index,omitempty"`
	Rounds   []workloadRound `json:"rounds"`
	Ratio    ratio           `json:"ratio"`
}

// workloadRound is the drain in the situation and the drain without it.
type workloadRound struct {
	Load     drainMeasure `json:"workload"`
	Baseline drainMeasure `json:"baseline"`
	Ratio    float64      `json:"ratio"` // jobs/s of Load over Baseline
}

func (w *workloadResult) add(load, base drainMeasure) {
	r := workloadRound{Load: load, Baseline: base}
	if base.JobsPerSec > 0 {
		r.Ratio = load.JobsPerSec / base.JobsPerSec
	}
	w.Rounds = append(w.Rounds, r)
	v := pluck(w.Rounds, func(r workloadRound) float64 { return r.Ratio })
	w.Ratio = ratio{Name: w.Workload + " / " + w.Baseline, Median: median(v), Min: slices.Min(v), Max: slices.Max(v)}
}

// selectWorkloads parses --workload.
func selectWorkloads(list string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.Contains(workloadNames, n) {
			return nil, fmt.Errorf("unknown workload %q (want %s)", n, strings.Join(workloadNames, ","))
		}
		out = append(out, n)
	}
	return out, nil
}

// workloadContenders are the contenders a workload drains with: those of
// --only that are not PHP's, lw-c128 by default.
func workloadContenders(only string) ([]contender, error) {
	if strings.TrimSpace(only) == "" {
		only = "lw-c128"
	}
	cts, err := selectContenders(only, true)
	if err != nil {
		return nil, err
	}
	for _, ct := range cts {
		if ct.php {
			return nil, fmt.Errorf("--only %s: the workloads measure laraworker and its raw loops (PHP runs beside in continuous mode with --laravel-app)", ct.name)
		}
	}
	return cts, nil
}

// runWorkloads runs each named workload for each contender, round after
// round.
func (b *runner) runWorkloads(rep *report, names []string) error {
	for _, name := range names {
		for _, ct := range b.contenders {
			var err error
			switch name {
			case wlSharedPHP:
				err = b.sharedPHP(rep, ct)
			case wlDelayed:
				err = b.delayedBacklog(rep, ct)
			case wlNoStats:
				err = b.noStats(rep, ct)
			case wlContinuous:
				if ct.raw != "" {
					b.progress("continuous: %s skipped (a raw loop is no daemon)", ct.name)
					continue
				}
				err = b.continuous(rep, ct)
			}
			if err != nil {
				return fmt.Errorf("%s, %s: %w", name, ct.name, err)
			}
		}
	}
	return nil
}

func (b *runner) progressRound(w *workloadResult) {
	r := w.Rounds[len(w.Rounds)-1]
	b.progress("%s %-9s round %d: %8.0f vs %8.0f jobs/s  ratio %.3f  cpu %.0f/%.0f  server cpu %.0f/%.0f ms/1k  load %.2f/%.2f",
		w.Workload, w.Contender, len(w.Rounds), r.Load.JobsPerSec, r.Baseline.JobsPerSec, r.Ratio,
		r.Load.CPUPer1k, r.Baseline.CPUPer1k, r.Load.ServerCPUPer1k, r.Baseline.ServerCPUPer1k, r.Load.Load1, r.Baseline.Load1)
	if r.killed() {
		b.progress("%s %-9s round %d: a drain or its empty-queue run did not stop within its limit and was killed (the rates count what was drained)",
			w.Workload, w.Contender, len(w.Rounds))
	}
}

func printWorkloads(w io.Writer, ws []*workloadResult) {
	if len(ws) == 0 {
		return
	}
	fmt.Fprintln(w)
	var rows [][]string
	for _, wl := range ws {
		med := func(f func(workloadRound) float64) float64 { return median(pluck(wl.Rounds, f)) }
		loads := append(pluck(wl.Rounds, func(r workloadRound) float64 { return r.Load.Load1 }),
			pluck(wl.Rounds, func(r workloadRound) float64 { return r.Baseline.Load1 })...)
		rows = append(rows, []string{wl.Workload, wl.Contender, orDash(wl.Index),
			fmt.Sprintf("%.0f", med(func(r workloadRound) float64 { return r.Load.JobsPerSec })),
			fmt.Sprintf("%.0f", med(func(r workloadRound) float64 { return r.Baseline.JobsPerSec })),
			fmt.Sprintf("%.3f", wl.Ratio.Median), fmt.Sprintf("%.3f-%.3f", wl.Ratio.Min, wl.Ratio.Max),
			orDash(ms(med(func(r workloadRound) float64 { return r.Load.CPUPer1k }))) + " / " + orDash(ms(med(func(r workloadRound) float64 { return r.Baseline.CPUPer1k }))),
			orDash(ms(med(func(r workloadRound) float64 { return r.Load.ServerCPUPer1k }))) + " / " + orDash(ms(med(func(r workloadRound) float64 { return r.Baseline.ServerCPUPer1k }))),
			fmt.Sprintf("%.2f-%.2f", slices.Min(loads), slices.Max(loads))})
	}
	_ = console.WriteTable(w, []string{"workload", "contender", "index", "jobs/s", "baseline jobs/s", "ratio", "spread",
		"CPU ms/1k (wl / base)", "server CPU ms/1k (wl / base)", "load1"}, rows)
	said := map[string]bool{}
	for _, wl := range ws {
		if line := fmt.Sprintf("  %s: %s; baseline: %s", wl.Workload, wl.Setup, wl.Baseline); !said[line] {
			said[line] = true
			fmt.Fprintln(w, line)
		}
		if n := killedRounds(wl); n > 0 {
			fmt.Fprintf(w, "  %s %s: %d of %d rounds had a drain killed, still running past its limit (its rate counts what it drained)\n",
				wl.Workload, wl.Contender, n, len(wl.Rounds))
		}
	}
}

// killed: a drain of the round, or its empty-queue run, was killed.
func (r workloadRound) killed() bool { return r.Load.Killed || r.Baseline.Killed }

// killedRounds counts the rounds with a drain that was killed.
func killedRounds(wl *workloadResult) int {
	n := 0
	for _, r := range wl.Rounds {
		if r.killed() {
			n++
		}
	}
	return n
}
