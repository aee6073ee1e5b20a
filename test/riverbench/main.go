// Command riverbench drains the same number of no-op jobs on PostgreSQL
// with River and with laraworker (the library: worker.New on Laravel's
// tables), in alternated rounds of the same run, at several
// concurrencies, and reports jobs/s, the worker's CPU and the database
// server's CPU per 1,000 jobs, medians with their spread and the ratio
// laraworker/River round by round. docs/PERFORMANCE.md ("Against River")
// says how to run it and how to read it.
//
// It is a module of its own so that laraworker's go.mod never requires
// River.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"
)

type options struct {
	dsn         string
	jobs        int
	rounds      int
	roundOffset int
	concurrency []int
	schema      string
	table       string
	keep        bool
	analyze     bool
	claimIndex  bool
	json        bool
	only        string
}

func main() {
	var o options
	var conc string
	flag.StringVar(&o.dsn, "dsn", "postgres://postgres@127.0.0.1:5432/test", "PostgreSQL to run on (both contenders)")
	flag.IntVar(&o.jobs, "jobs", 20000, "jobs per drain")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; figures are medians, ratios are per round")
	flag.IntVar(&o.roundOffset, "round-offset", 0, "number the rounds from this + 1 (which contender goes first alternates with the round): for a driver that runs one round per call, as test/headline does")
	flag.StringVar(&conc, "concurrency", "1,16,128", "concurrencies: laraworker's Concurrency and River's MaxWorkers")
	flag.StringVar(&o.schema, "schema", "riverbench", "schema River's tables are migrated into (created, dropped at the end)")
	flag.StringVar(&o.table, "table", "riverbench_jobs", "laraworker's jobs table (with _failed and _batches beside; dropped at the end)")
	flag.BoolVar(&o.claimIndex, "claim-index", false, "create laraworker's opt-in claim index (`laraworker tables --index`) on its jobs table")
	flag.BoolVar(&o.analyze, "analyze", false, "ANALYZE both job tables after each load (default: as the server keeps them; with autovacuum off, never)")
	flag.BoolVar(&o.keep, "keep", false, "keep River's schema and laraworker's tables")
	flag.BoolVar(&o.json, "json", false, "print the results as JSON as well")
	flag.StringVar(&o.only, "only", "", "run one contender only, laraworker or river (for callgrind.sh: no table, no ratio)")
	flag.Parse()
	for _, s := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fail(fmt.Errorf("-concurrency %q: want positive integers separated by commas", conc))
		}
		o.concurrency = append(o.concurrency, n)
	}
	if o.only != "" && o.only != "laraworker" && o.only != "river" {
		fail(fmt.Errorf("-only %q: want laraworker or river", o.only))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := run(ctx, o)
	if err != nil {
		fail(err)
	}
	if rep == nil { // -only: the stderr lines are the result
		return
	}
	rep.print(os.Stdout)
	if o.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "riverbench:", err)
	os.Exit(1)
}

// run sets both contenders up and measures them round by round: in odd
// rounds laraworker drains first, in even rounds River does, so neither
// always gets the fresher machine.
func run(ctx context.Context, o options) (*report, error) {
	lw, err := newLaraworker(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("laraworker: %w", err)
	}
	defer lw.close(o.keep)
	rv, err := newRiver(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("river: %w", err)
	}
	defer rv.close(o.keep)
	rep := &report{Jobs: o.jobs, Rounds: o.rounds, Started: time.Now().UTC(), ServerVersion: lw.serverVersion(), Analyzed: o.analyze, ClaimIndex: o.claimIndex}
	for round := 1 + o.roundOffset; round <= o.rounds+o.roundOffset; round++ {
		for _, c := range o.concurrency {
			order := []contender{lw, rv}
			if round%2 == 0 {
				order = []contender{rv, lw}
			}
			got := map[string]measure{}
			for _, ct := range order {
				if o.only != "" && ct.name() != o.only {
					continue
				}
				m, err := drain(ctx, ct, o.jobs, c)
				if err != nil {
					return nil, fmt.Errorf("%s c%d, round %d: %w", ct.name(), c, round, err)
				}
				got[ct.name()] = m
				fmt.Fprintf(os.Stderr, "round %d c%-4d %-10s %8.0f jobs/s  cpu %5.0f ms/1k  server cpu %5.0f ms/1k  load %.2f\n",
					round, c, ct.name(), m.JobsPerSec, m.CPUPer1k, m.ServerCPUPer1k, m.Load1)
			}
			if o.only == "" {
				rep.add(c, got[lw.name()], got[rv.name()])
			}
		}
	}
	if o.only != "" {
		return nil, nil
	}
	rep.finish()
	return rep, nil
}
