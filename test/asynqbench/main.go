// Command asynqbench drains the same number of no-op jobs on one private
// redis-server with laraworker (the library: worker.New on Laravel's
// Redis queue) and with hibiken/asynq, in alternated rounds of the same
// run, at several concurrencies; with a Laravel app it also drains with
// one `php artisan queue:work redis` and with the `laraworker work`
// command; and it measures the pick-up latency at a steady arrival rate.
// It reports jobs/s, CPU per 1,000 jobs of the worker and of
// redis-server, medians with their spread and the ratios round by round.
// docs/PERFORMANCE.md ("Against asynq") says how to run it and how to
// read it.
//
// It is a module of its own so that laraworker's go.mod never requires
// asynq.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

type options struct {
	redisServer    string
	jobs           int
	phpJobs        int
	rounds         int
	roundOffset    int
	concurrency    []int
	asynqPayload   int
	app            string
	php            string
	laraworker     string
	laraworkerBase string
	cliConcurrency int
	latencyJobs    int
	latencyRate    float64
	latencyC       int
	blockFor       time.Duration
	only           []string
	json           bool
	cpuProfile     string
	redisCallgrind bool
	keep           bool
	horizon        bool
}

var parts = []string{"laraworker", "asynq", "php", "cli", "latency"}

func (o options) runs(part string) bool { return slices.Contains(o.only, part) }

func main() {
	var o options
	var conc, only string
	flag.StringVar(&o.redisServer, "redis-server", "redis-server", "the redis-server binary: a private server is started on a free loopback port")
	flag.IntVar(&o.jobs, "jobs", 20000, "jobs per drain (libraries and the laraworker command)")
	flag.IntVar(&o.phpJobs, "php-jobs", 3000, "jobs per drain of the PHP worker")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; figures are medians, ratios are per round")
	flag.IntVar(&o.roundOffset, "round-offset", 0, "number the rounds from this + 1 (which contender goes first alternates with the round): for a driver that runs one round per call, as test/headline does")
	flag.StringVar(&conc, "concurrency", "1,16,128", "concurrencies: laraworker's Concurrency and asynq's")
	flag.IntVar(&o.asynqPayload, "asynq-payload", 0, "bytes of payload in each asynq task (laraworker's are Laravel's, about 640 bytes)")
	flag.StringVar(&o.app, "laravel-app", "../../testdata/laravel", "the Laravel app the PHP worker and the laraworker command run on (copied; the original is not touched)")
	flag.StringVar(&o.php, "php", "php", "the php binary")
	flag.StringVar(&o.laraworker, "laraworker", "", "the laraworker binary (default: built from this checkout)")
	flag.StringVar(&o.laraworkerBase, "laraworker-base", "", "a second laraworker binary (another commit's build) that drains as the command does, in the same rounds (-only cli): before and after a change")
	flag.IntVar(&o.cliConcurrency, "cli-concurrency", 128, "--concurrency of the laraworker command")
	flag.IntVar(&o.latencyJobs, "latency-jobs", 500, "jobs per latency measurement")
	flag.Float64Var(&o.latencyRate, "latency-rate", 100, "arrival rate of the latency phase, jobs per second")
	flag.IntVar(&o.latencyC, "latency-concurrency", 16, "concurrency of the workers in the latency phase")
	flag.DurationVar(&o.blockFor, "block-for", 5*time.Second, "block_for of the latency setup with block_for")
	flag.StringVar(&only, "only", strings.Join(parts, ","), "what to run: "+strings.Join(parts, ", "))
	flag.BoolVar(&o.json, "json", false, "print the results as JSON as well")
	flag.BoolVar(&o.horizon, "horizon", false, "laraworker writes Laravel Horizon's records of its jobs (work --horizon on)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary folder (logs, the app copy, redis.callgrind) and print its path")
	flag.BoolVar(&o.redisCallgrind, "redis-callgrind", false, "run redis-server under valgrind's callgrind and report its instructions per job for each library drain (slow: use a few thousand jobs)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of each library drain (the timed part) to this path + .NAME.cN.rROUND")
	flag.Parse()
	for _, s := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fail(fmt.Errorf("-concurrency %q: want positive integers separated by commas", conc))
		}
		o.concurrency = append(o.concurrency, n)
	}
	for _, s := range strings.Split(only, ",") {
		if s = strings.TrimSpace(s); !slices.Contains(parts, s) {
			fail(fmt.Errorf("-only %q: want some of %s", only, strings.Join(parts, ", ")))
		}
		o.only = append(o.only, s)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := run(ctx, o)
	if err != nil {
		fail(err)
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
	fmt.Fprintln(os.Stderr, "asynqbench:", err)
	os.Exit(1)
}

// run sets everything up and measures round by round: in odd rounds
// laraworker drains first, in even rounds asynq does (and PHP and the
// laraworker command likewise), so neither always gets the fresher
// machine.
func run(ctx context.Context, o options) (*report, error) {
	dir, err := os.MkdirTemp("", "asynqbench-")
	if err != nil {
		return nil, err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "keeping", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	srv, err := startRedis(ctx, o.redisServer, dir, o.redisCallgrind)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	lw, err := newLaraworker(ctx, srv, dir, o.horizon)
	if err != nil {
		return nil, fmt.Errorf("laraworker: %w", err)
	}
	defer lw.close()
	as := newAsynq(srv, o.asynqPayload)
	defer as.close()
	var procs []*procContender
	if o.runs("php") || o.runs("cli") {
		if procs, err = setUpProcs(ctx, o, srv, dir); err != nil {
			return nil, err
		}
	}
	rep := &report{Jobs: o.jobs, PHPJobs: o.phpJobs, Rounds: o.rounds, Started: time.Now().UTC(), RedisVersion: srv.version, AsynqPayloadBytes: o.asynqPayload}
	if len(procs) > 0 {
		rep.Procs = &procLevel{CLIConcurrency: o.cliConcurrency}
	}
	var libs []contender
	if o.runs("laraworker") {
		libs = append(libs, lw)
	}
	if o.runs("asynq") {
		libs = append(libs, as)
	}
	for round := 1 + o.roundOffset; round <= o.rounds+o.roundOffset; round++ {
		for _, c := range o.concurrency {
			for _, ct := range alternate(libs, round) {
				profile := ""
				if o.cpuProfile != "" {
					profile = fmt.Sprintf("%s.%s.c%d.r%d", o.cpuProfile, ct.name(), c, round)
				}
				m, err := drain(ctx, srv, ct, o.jobs, c, profile)
				if err != nil {
					return nil, fmt.Errorf("%s c%d, round %d: %w", ct.name(), c, round, err)
				}
				rep.add(c, ct.name(), m)
				progress(round, fmt.Sprintf("c%d %s", c, ct.name()), m)
			}
		}
		for _, p := range alternate(procs, round) {
			n := o.jobs
			if p.label == "php-1" {
				n = o.phpJobs
			}
			m, err := procDrain(ctx, srv, p, lw, n)
			if err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", p.label, round, err)
			}
			switch {
			case p.label == "php-1":
				rep.Procs.PHP = append(rep.Procs.PHP, m)
			case p.base:
				rep.Procs.CLIBase = append(rep.Procs.CLIBase, m)
			default:
				rep.Procs.CLI = append(rep.Procs.CLI, m)
			}
			progress(round, p.label, m)
		}
	}
	if o.runs("latency") && o.latencyJobs > 0 {
		block := o.blockFor
		for _, setup := range []latencySetup{
			laraworkerLatency(lw, o.latencyC, 3*time.Second, nil),
			laraworkerLatency(lw, o.latencyC, 0, nil),
			laraworkerLatency(lw, o.latencyC, 3*time.Second, &block),
			asynqLatency(as, o.latencyC),
		} {
			res, err := measureLatency(ctx, srv, setup, o.latencyJobs, o.latencyRate, 2*time.Second)
			if err != nil {
				return nil, fmt.Errorf("latency, %s: %w", setup.name, err)
			}
			fmt.Fprintf(os.Stderr, "latency %-45s p50 %7.2f ms  p99 %7.2f ms  load %.2f\n", res.Name, res.P50Ms, res.P99Ms, res.Load1)
			rep.Latency = append(rep.Latency, res)
		}
	}
	rep.Finished = time.Now().UTC()
	rep.finish()
	return rep, nil
}

// setUpProcs copies the Laravel app and returns the PHP worker and the
// laraworker command, as asked for.
func setUpProcs(ctx context.Context, o options, srv *redisServer, dir string) ([]*procContender, error) {
	if _, err := os.Stat(filepath.Join(o.app, "artisan")); err != nil {
		return nil, fmt.Errorf("-laravel-app %s: not a Laravel app (no artisan): %w (-only laraworker,asynq,latency leaves PHP and the command out)", o.app, err)
	}
	app, err := newAppCopy(o.app, dir, srv)
	if err != nil {
		return nil, err
	}
	var procs []*procContender
	if o.runs("php") {
		procs = append(procs, newPHP(app, o.php, dir))
	}
	if o.runs("cli") {
		bin := o.laraworker
		if bin == "" {
			if bin, err = buildLaraworker(ctx, dir); err != nil {
				return nil, err
			}
		}
		if err := app.createTables(ctx, bin, o.php); err != nil {
			return nil, err
		}
		procs = append(procs, newCLI(app, bin, o.php, o.cliConcurrency, dir))
		if o.laraworkerBase != "" {
			base := newCLI(app, o.laraworkerBase, o.php, o.cliConcurrency, dir)
			base.label, base.base = base.label+"-base", true
			procs = append(procs, base)
		}
	}
	return procs, nil
}

// alternate is xs in order in odd rounds and reversed in even ones.
func alternate[T any](xs []T, round int) []T {
	out := slices.Clone(xs)
	if round%2 == 0 {
		slices.Reverse(out)
	}
	return out
}

func progress(round int, what string, m measure) {
	fmt.Fprintf(os.Stderr, "round %d %-16s %8.0f jobs/s  cpu %6.1f ms/1k  redis cpu %6.1f ms/1k  load %.2f\n",
		round, what, m.JobsPerSec, m.CPUPer1k, m.RedisCPUPer1k, m.Load1)
}
