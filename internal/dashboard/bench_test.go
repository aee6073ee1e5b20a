package dashboard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/dashboard/internal/testdash"
	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
)

// The large-table benchmarks (docs/PERFORMANCE.md, "Dashboard") run on
// MariaDB with LARAWORKER_BENCH_DASHBOARD=1, on the tables
// internal/testdash builds:
//
//	go test -run '^$' -bench 'DashboardPages|DrainBesideDashboard' -benchtime 20x ./internal/dashboard/

// warm refreshes srv's snapshot until its caches hold both tables and the
// rolling pass has gone round once, and reports what that took.
func warm(b *testing.B, srv *Server) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Snapshot().Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	start := time.Now()
	n := 0
	for {
		if err := srv.Snapshot().Refreshed(ctx); err != nil {
			b.Fatal(err)
		}
		n++
		sum := srv.Snapshot().Current()
		if sum.JobsCaughtUp && sum.FailedCaughtUp && !sum.JobsPass.LastDone.IsZero() {
			break
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.Logf("caches warm after %d refreshes, %s; heap in use %.0f MB, RSS %.0f MB", n, time.Since(start).Round(time.Millisecond),
		float64(ms.HeapInuse)/(1<<20), float64(testdash.RSS())/(1<<20))
}

// timeRefreshes times n refreshes of srv's warm snapshot, each asked for
// and waited on as the pages' actions do.
func timeRefreshes(b *testing.B, srv *Server, n int) []time.Duration {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Snapshot().Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	var out []time.Duration
	for range n {
		t0 := time.Now()
		if err := srv.Snapshot().Refreshed(ctx); err != nil {
			b.Fatal(err)
		}
		out = append(out, time.Since(t0))
	}
	return out
}

// BenchmarkDashboardPages times each page against the large tables, with
// the caches warm (as a dashboard that has been running is). ms/page is
// the median; p99-ms the 99th percentile; refresh-ms what one background
// refresh of the caches takes.
func BenchmarkDashboardPages(b *testing.B) {
	q := testdash.BenchQueue(b)
	fl := fleet.NewStore(q.DB(), q.Dialect(), fleet.TablesWithPrefix("dashbench_"+testdsn.Suffix(b)+"_"))
	if err := fl.CreateTables(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = fl.DropTables(context.Background()) })
	srv, err := New(Options{Tables: tablesOf(q), Store: q, Fleet: fl, Logger: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	warm(b, srv)
	refreshes := timeRefreshes(b, srv, 5)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := context.Background()
	anyJob, _, err := srv.Snapshot().Jobs().List(ctx, snapshot.JobFilter{Queue: "high"}, "50000", 1)
	if err != nil || len(anyJob) == 0 {
		b.Fatalf("no job on high: %v", err)
	}
	anyFailed, _ := srv.Snapshot().FailedIDs(snapshot.FailedFilter{}, 50000, 1)
	pages := []string{
		"/", "/running", "/jobs", "/jobs?queue=later&class=" + urlq(`App\Jobs\Jo00003`) + "&state=delayed",
		fmt.Sprintf("/jobs/%d", anyJob[0].ID), "/failed", "/failed?class=" + urlq(`App\Jobs\Jo00005`),
		"/failed?queue=high&from=" + time.Now().UTC().Format(time.DateOnly), "/failed?q=" + urlq("could not be processed"),
		fmt.Sprintf("/failed/%d", anyFailed[0]), "/control", "/api/series?span=hour", "/api/series?span=day",
	}
	for _, p := range pages {
		b.Run(strings.NewReplacer("/", "_", "?", "_").Replace(p), func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				t0 := time.Now()
				resp, err := http.Get(hs.URL + p)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%s: %d", p, resp.StatusCode)
				}
				times = append(times, time.Since(t0))
			}
			slices.Sort(times)
			b.ReportMetric(ms(times[len(times)/2]), "ms/page")
			b.ReportMetric(ms(times[min(len(times)-1, len(times)*99/100)]), "p99-ms")
			slices.Sort(refreshes)
			b.ReportMetric(ms(refreshes[len(refreshes)/2]), "refresh-ms")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func urlq(s string) string { return strings.NewReplacer(`\`, "%5C", " ", "+").Replace(s) }

// BenchmarkDrainBesideDashboard drains 20,000 ready jobs with an
// in-process worker at concurrency 128 (no-op handler), without and with
// a dashboard watching the large tables on the same MariaDB from the same
// process (its background refresh at the default pace, and a page view
// every second), the two alternating in each round (-benchtime Nx for N
// rounds). The worker drains a jobs table of its own: a claim on a
// table with 1,000,000 older rows is slow by itself (Laravel's query, see
// docs/PERFORMANCE.md, "Large table"), which would hide the dashboard's
// share.
func BenchmarkDrainBesideDashboard(b *testing.B) {
	q := testdash.BenchQueue(b)
	cfg := q.Config()
	cfg.JobsTable, cfg.FailedTable, cfg.BatchesTable = cfg.JobsTable+"_drain", cfg.FailedTable+"_drain", cfg.BatchesTable+"_drain"
	dq, err := database.Open(context.Background(), cfg, database.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = dq.DropTables(context.Background()); dq.Close() })
	if err := dq.CreateTables(context.Background()); err != nil {
		b.Fatal(err)
	}
	var without, with, ratio []float64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		// Alternate which goes first, so a drift of the machine's load
		// hits both sides alike.
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		var round [2]float64
		for _, watching := range order {
			pushReady(b, dq, 20000)
			stop := func() {}
			if watching {
				stop = watch(b, q)
			}
			t0 := time.Now()
			drain(b, dq)
			rate := 20000 / time.Since(t0).Seconds()
			stop()
			if watching {
				round[1] = rate
			} else {
				round[0] = rate
			}
		}
		b.Logf("round %d: %.0f jobs/s without the dashboard, %.0f with", i+1, round[0], round[1])
		without, with, ratio = append(without, round[0]), append(with, round[1]), append(ratio, round[1]/round[0])
		b.StartTimer()
	}
	b.ReportMetric(float64(testdash.RSS())/(1<<20), "rss-MB")
	b.ReportMetric(median(without), "jobs/s-without")
	b.ReportMetric(median(with), "jobs/s-with")
	b.ReportMetric(median(ratio), "with/without")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func pushReady(b *testing.B, q *database.Queue, n int) {
	b.Helper()
	noop := fixture(b, "noop", "")
	items := make([]jobqueue.PushItem, 0, 1000)
	for i := 0; i < n; i++ {
		items = append(items, jobqueue.PushItem{Queue: "drain", Payload: noop})
		if len(items) == cap(items) {
			if err := q.PushMany(context.Background(), items); err != nil {
				b.Fatal(err)
			}
			items = items[:0]
		}
	}
}

// watched is the one warm dashboard the drain benchmark reuses across
// rounds (warming it takes minutes).
var watched struct {
	once sync.Once
	srv  *Server
	hs   *httptest.Server
}

// watch runs the warm dashboard's refresh loop and a page view every
// second until the returned stop.
func watch(b *testing.B, q *database.Queue) (stop func()) {
	b.Helper()
	watched.once.Do(func() {
		fl := fleet.NewStore(q.DB(), q.Dialect(), fleet.TablesWithPrefix("dashbench_"))
		if err := fl.CreateTables(context.Background()); err != nil {
			b.Fatal(err)
		}
		srv, err := New(Options{Tables: tablesOf(q), Store: q, Fleet: fl, Logger: zerolog.Nop()})
		if err != nil {
			b.Fatal(err)
		}
		warm(b, srv)
		watched.srv, watched.hs = srv, httptest.NewServer(srv)
	})
	srv, hs := watched.srv, watched.hs
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); srv.Snapshot().Run(ctx) }()
	go func() {
		defer wg.Done()
		pages := []string{"/", "/running", "/jobs", "/failed"}
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if resp, err := http.Get(hs.URL + pages[i%len(pages)]); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// drain runs a worker at concurrency 128 until the 20,000 jobs are done.
// A worker can stop on --stop-when-empty with rows left (docs/
// PERFORMANCE.md, "Open"): it is then run again, within the same time.
func drain(b *testing.B, q *database.Queue) {
	b.Helper()
	reg := handlers.NewRegistry()
	reg.Handle(`App\Jobs\NoopJob`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
	var done int64
	for try := 0; done < 20000; try++ {
		if try == 5 {
			b.Fatalf("drained %d jobs in 5 runs, want 20000", done)
		}
		w, err := worker.New(q, reg, worker.Config{Queues: []string{"drain"}, Concurrency: 128, StopWhenEmpty: true, Sleep: -1,
			// The dashboard's caches share the process: --memory must not
			// stop the worker (see docs/PERFORMANCE.md, "Dashboard").
			MemoryMB: -1})
		if err != nil {
			b.Fatal(err)
		}
		w.Run(context.Background())
		done += w.Stats().Done
	}
}
