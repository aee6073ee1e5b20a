package database

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// BenchmarkClaimWorkloads measures the claim paths on tables shaped like
// issue 15's workloads, each on a fresh table that was never analysed:
//
//   - alone: only Go's jobs (the baseline);
//   - shared: Go's jobs queued behind PHP-only jobs on the same queue;
//   - delayed: Go's ready jobs behind (higher ids than) delayed ones;
//   - running: Go's ready jobs behind 1,000 of its jobs reserved and
//     running (not expired), which the claim index's range reads past.
//
// Each workload is filled once per path, in a fresh table each time:
// "before" is Laravel's query in the select-and-reserve transaction (the
// code before issue 15), "onestmt" the same query as one UPDATE ...
// RETURNING (PostgreSQL), "analysed" that after ANALYZE (PostgreSQL:
// the plan Laravel's query gets with statistics), "indexed" the claim
// index created after the fill. A drain is claimers goroutines each claiming batches of
// batch jobs of the Go class and deleting them (the worker's grouped
// delete), until drain jobs are done or maxDrain passes; the rate is
// jobs/s. Before each drain, c1-ms is the mean latency of 100 single-job
// claims (claim one + delete).
//
//	go test ./laravel -run '^$' -bench ClaimWorkloads -benchtime 1x
//
// Sizes: LARAWORKER_BENCH_SCALE (default 1) multiplies every row count
// (5: issue 15's 1,000,000 delayed / 100,000 ready);
// LARAWORKER_BENCH_PATHS=before,indexed runs only those paths;
// LARAWORKER_BENCH_RUNNING sets the running workload's reservations.
func BenchmarkClaimWorkloads(b *testing.B) {
	scale := 1.0
	if v, err := strconv.ParseFloat(os.Getenv("LARAWORKER_BENCH_SCALE"), 64); err == nil {
		scale = v
	}
	n := func(x int) int { return int(float64(x) * scale) }
	running := n(1_000)
	if v, err := strconv.Atoi(os.Getenv("LARAWORKER_BENCH_RUNNING")); err == nil {
		running = v
	}
	workloads := []struct {
		name                         string
		php, delayed, ready, running int
	}{
		{"alone", 0, 0, n(5_000), 0},
		{"shared", n(50_000), 0, n(5_000), 0},
		{"delayed", 0, n(200_000), n(20_000), 0},
		{"running", 0, 0, n(5_000), running},
	}
	for _, engine := range []string{appconfig.EngineMySQL, appconfig.EnginePgSQL} {
		for _, w := range workloads {
			b.Run(engine+"/"+w.name, func(b *testing.B) {
				drain := min(2_000, w.ready/2-200)
				paths := []string{"before", "indexed"} // MySQL has no one-statement claim
				if engine == appconfig.EnginePgSQL {
					paths = []string{"before", "onestmt", "analysed", "indexed"}
				}
				if only := os.Getenv("LARAWORKER_BENCH_PATHS"); only != "" {
					paths = slices.DeleteFunc(paths, func(p string) bool { return !slices.Contains(strings.Split(only, ","), p) })
				}
				for _, path := range paths {
					// A fresh table per path: a drain leaves deleted rows
					// the next one would have to skip until purged.
					q := benchQueue(b, engine)
					q.oneStatementClaims = q.st.OneStatementClaims() && path != "before"
					e := &testEnv{engine: engine, q: q, ctx: context.Background(), cfg: q.cfg}
					e.fillRunning(b, w.running)
					e.fillBacklog(b, w.php, w.delayed, w.ready)
					if path == "analysed" { // Laravel's query on a table with statistics
						if _, err := q.db.ExecContext(e.ctx, "analyze "+q.st.Q(q.cfg.JobsTable)); err != nil {
							b.Fatal(err)
						}
					}
					if path == "indexed" {
						if err := q.CreateClaimIndex(e.ctx); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(singleClaimMillis(b, q, 100), path+"-c1-ms")
					b.ReportMetric(drainRate(b, q, drain, 4, 32, 20*time.Second), path+"-jobs/s")
					if err := q.DropTables(e.ctx); err != nil { // now, not at the end: big tables
						b.Fatal(err)
					}
				}
				b.ReportMetric(load1(), "load1")
			})
		}
	}
}

// fillRunning pushes n Go jobs and claims them: reservations still
// running, ahead of (older than) what is filled next.
func (e *testEnv) fillRunning(b *testing.B, n int) {
	if n == 0 {
		return
	}
	e.fillBacklog(b, 0, 0, n)
	for left := n; left > 0; {
		jobs, err := e.q.Claim(e.ctx, nil, min(left, 500), benchOpts)
		if err != nil || len(jobs) == 0 {
			b.Fatalf("reserving the running jobs: %d, %v", len(jobs), err)
		}
		left -= len(jobs)
	}
}

var benchOpts = jobqueue.ClaimOptions{DisplayNames: []string{`App\Jobs\Go`}}

// singleClaimMillis is the mean time of n claims of one job, each
// followed by its delete.
func singleClaimMillis(b *testing.B, q *Queue, n int) float64 {
	ctx := context.Background()
	start := time.Now()
	for range n {
		jobs, err := q.Claim(ctx, nil, 1, benchOpts)
		if err != nil || len(jobs) != 1 {
			b.Fatalf("claim one: %d jobs, %v", len(jobs), err)
		}
		if _, err := q.Delete(ctx, jobs); err != nil {
			b.Fatal(err)
		}
	}
	return float64(time.Since(start).Microseconds()) / 1000 / float64(n)
}

// drainRate claims and deletes total jobs with claimers goroutines in
// batches, and returns jobs/s (over what was done when maxDrain passed).
func drainRate(b *testing.B, q *Queue, total, claimers, batch int, maxDrain time.Duration) float64 {
	return drainRateT(b, q, total, claimers, batch, maxDrain)
}

func drainRateT(b testing.TB, q *Queue, total, claimers, batch int, maxDrain time.Duration) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), maxDrain)
	defer cancel()
	var done atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Load() < int64(total) && ctx.Err() == nil {
				jobs, err := q.Claim(ctx, nil, batch, benchOpts)
				if err == nil && len(jobs) > 0 {
					_, err = q.Delete(context.Background(), jobs)
				}
				if err != nil && ctx.Err() == nil {
					failed.Store(fmt.Sprint(err))
					return
				}
				done.Add(int64(len(jobs)))
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		b.Fatal(f)
	}
	return float64(done.Load()) / time.Since(start).Seconds()
}

func load1() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var l float64
	_, _ = fmt.Sscan(string(raw), &l)
	return l
}
