// Command headline runs the headline block of docs/PERFORMANCE.md in one
// go: laraworker against one `php artisan queue:work` on MariaDB (c1, c16,
// c128, idle CPU, memory), against River on PostgreSQL, against asynq and
// PHP on Redis, in alternated rounds (the blocks, and the contenders
// inside each, run in reverse order in even rounds). It records the
// machine and the 1-minute load before and after every block, rejects a
// round taken under a load above -max-load (after a block: above
// -max-load + -own-load, what the block adds by itself), and writes the full record
// (docs/headline.json) and the figures the documents quote
// (docs/figures.json, the table between the headline markers of
// docs/PERFORMANCE.md): medians over the accepted rounds with their
// spread (min-max), never a best round.
//
//	go run ./test/headline                 # the real run: 5 accepted rounds, -max-load 1.5, writes docs/ (about 40 min)
//	go run ./test/headline -quick -max-load 50 -out /tmp/headline   # a smoke test: short rounds, nothing in docs/
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
)

type options struct {
	rounds      int
	maxRounds   int
	quick       bool
	maxLoad     float64
	ownLoad     float64
	settle      time.Duration
	out         string // folder of headline.json; "" writes docs/ (figures and tables too)
	repo        string
	mysqlDB     string
	pgDB        string
	app         string
	php         string
	jobs        int
	phpJobs     int
	redisPHP    int
	idleTime    time.Duration
	latencyJobs int
	skip        map[string]bool
	from        string
}

func main() {
	var o options
	var skip string
	flag.IntVar(&o.rounds, "rounds", 5, "accepted rounds wanted")
	flag.IntVar(&o.maxRounds, "max-rounds", 0, "rounds tried at most, rejected ones included (default 2 x -rounds)")
	flag.BoolVar(&o.quick, "quick", false, "a smoke test: 2 rounds of 2,000 jobs (PHP 300 on MariaDB, 2,000 on Redis), 3 s idle; writes only to -out")
	flag.Float64Var(&o.maxLoad, "max-load", 1.5, "reject a round whose 1-minute load before any of its blocks is above this, or after one above this + -own-load")
	flag.Float64Var(&o.ownLoad, "own-load", 2, "the load a block adds by its end by itself (a worker and a server busy on two cores), allowed on top of -max-load after it")
	flag.DurationVar(&o.settle, "settle", time.Minute, "pause before each block, so that the last block's own load decays from the 1-minute average before the next is judged")
	flag.StringVar(&o.out, "out", "", "write headline.json to this folder instead of docs/ (docs/figures.json and docs/PERFORMANCE.md are then left alone)")
	flag.StringVar(&o.repo, "repo", ".", "the root of the laraworker checkout")
	flag.StringVar(&o.mysqlDB, "mysql-db", "test", "MariaDB database (127.0.0.1:3306, root)")
	flag.StringVar(&o.pgDB, "pg-db", "test", "PostgreSQL database (127.0.0.1:5432, postgres)")
	flag.StringVar(&o.app, "laravel-app", "testdata/laravel", "the Laravel app PHP runs (copied by each bench)")
	flag.StringVar(&o.php, "php", "php", "the php binary")
	flag.IntVar(&o.jobs, "jobs", 20000, "jobs per drain of laraworker and its peers")
	flag.IntVar(&o.phpJobs, "php-jobs", 3000, "jobs per drain of PHP on MariaDB")
	flag.IntVar(&o.redisPHP, "redis-php-jobs", 10000, "jobs per drain of PHP on Redis (three times as fast as on MariaDB)")
	flag.IntVar(&o.latencyJobs, "latency-jobs", 300, "jobs of laraworker bench's pick-up latency phase on MariaDB (--sleep 0, 100 jobs/s; 0 skips it)")
	flag.DurationVar(&o.idleTime, "idle-time", 30*time.Second, "how long each worker's idle CPU is measured")
	flag.StringVar(&o.from, "from", "", "run nothing: write the docs (or -out) from this headline.json, e.g. after the table's labels changed")
	flag.StringVar(&skip, "skip", "", "blocks to leave out, comma-separated: mariadb, river, asynq (a run that skips one writes no docs)")
	flag.Parse()
	if o.quick {
		o.rounds, o.jobs, o.phpJobs, o.redisPHP, o.idleTime, o.settle, o.latencyJobs = 2, 2000, 300, 2000, 3*time.Second, 0, 50
		if o.out == "" {
			fail(fmt.Errorf("-quick writes no docs: give -out"))
		}
	}
	if o.maxRounds == 0 {
		o.maxRounds = 2 * o.rounds
	}
	o.skip = map[string]bool{}
	for _, s := range strings.Split(skip, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.skip[s] = true
		}
	}
	if len(o.skip) > 0 && o.out == "" {
		fail(fmt.Errorf("-skip writes no docs: give -out"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var rec *record
	var err error
	if o.from != "" {
		rec, err = readRecord(o.from)
	} else {
		rec, err = run(ctx, o)
	}
	if err != nil {
		fail(err)
	}
	if err := write(o, rec); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "headline:", err)
	os.Exit(1)
}

// run builds the programs, records the machine and runs rounds until
// o.rounds are accepted or o.maxRounds were tried.
func run(ctx context.Context, o options) (*record, error) {
	bin, err := os.MkdirTemp("", "headline-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(bin)
	progs, err := build(ctx, o.repo, bin)
	if err != nil {
		return nil, err
	}
	rec := &record{Command: strings.Join(os.Args, " "), MaxLoad: o.maxLoad, OwnLoad: o.ownLoad, SettleSec: o.settle.Seconds(), Quick: o.quick,
		Jobs: o.jobs, PHPJobs: o.phpJobs, RedisPHP: o.redisPHP, IdleSec: o.idleTime.Seconds(), Started: time.Now().UTC()}
	rec.Commit, err = gitCommit(o.repo)
	if err != nil {
		return nil, err
	}
	rec.Machine = machine(ctx, o)
	blocks := blocksFor(o, progs)
	accepted := 0
	for round := 1; round <= o.maxRounds && accepted < o.rounds; round++ {
		r := roundRecord{Round: round, Accepted: true, Metrics: map[string]float64{}}
		for _, b := range alternate(blocks, round) {
			if err := sleep(ctx, o.settle); err != nil {
				return nil, err
			}
			br, err := runBlock(ctx, b, round)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", round, b.name, err)
			}
			for k, v := range br.metrics {
				r.Metrics[k] = v
			}
			r.Blocks = append(r.Blocks, br.blockRecord)
			if br.LoadBefore > o.maxLoad || br.LoadAfter > o.maxLoad+o.ownLoad {
				r.Accepted = false
				r.Rejected = append(r.Rejected, fmt.Sprintf("%s: load %.2f before (at most %.2f), %.2f after (at most %.2f)",
					b.name, br.LoadBefore, o.maxLoad, br.LoadAfter, o.maxLoad+o.ownLoad))
			}
		}
		derive(r.Metrics)
		if r.Accepted {
			accepted++
		}
		fmt.Fprintf(os.Stderr, "headline: round %d %s\n", round, map[bool]string{true: "accepted", false: "rejected: " + strings.Join(r.Rejected, "; ")}[r.Accepted])
		rec.Rounds = append(rec.Rounds, r)
	}
	rec.Latency = latencyHook(ctx, progs, o)
	rec.Finished = time.Now().UTC()
	if accepted == 0 {
		return rec, fmt.Errorf("no round was taken under a load of %.2f or less (%d tried): rerun on a quieter machine; nothing written", o.maxLoad, len(rec.Rounds))
	}
	rec.summarize()
	return rec, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// programs are the binaries the blocks run.
type programs struct{ laraworker, riverbench, asynqbench string }

// build compiles laraworker and the two peer benchmarks (modules of
// their own) once, so that no round pays for a build.
func build(ctx context.Context, repo, dir string) (programs, error) {
	p := programs{filepath.Join(dir, "laraworker"), filepath.Join(dir, "riverbench"), filepath.Join(dir, "asynqbench")}
	for _, b := range []struct{ dir, out string }{{".", p.laraworker}, {"test/riverbench", p.riverbench}, {"test/asynqbench", p.asynqbench}} {
		if _, err := command(ctx, filepath.Join(repo, b.dir), "go", "build", "-o", b.out, "."); err != nil {
			return p, fmt.Errorf("building %s: %w", b.dir, err)
		}
	}
	return p, nil
}

// alternate is xs in order in odd rounds and reversed in even ones.
func alternate[T any](xs []T, round int) []T {
	out := append([]T(nil), xs...)
	if round%2 == 0 {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}
