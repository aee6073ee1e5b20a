//go:build !race

package worker

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
)

// TestSoakMemoryFlat runs about 100,000 no-op jobs through one worker on
// SQLite and fails when the live heap after a forced GC grows by more than
// soakHeapBound between the first tenth of the jobs and the last, or when
// goroutines are left behind. A leak of a few hundred bytes per job (a
// context never cancelled, a map entry never deleted) shows as megabytes.
//
// It does not run under -race (the race detector's bookkeeping grows with
// every goroutine ever started); scripts/test runs it in a step of its
// own. LARAWORKER_SOAK_JOBS changes the number of jobs.
func TestSoakMemoryFlat(t *testing.T) {
	jobs := 100_000
	if v := os.Getenv("LARAWORKER_SOAK_JOBS"); v != "" {
		jobs, _ = strconv.Atoi(v)
	}
	if testing.Short() {
		t.Skip("soak test skipped in -short mode")
	}
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	pushNoops(t, q, jobs)

	reg := handlers.NewRegistry()
	reg.Handle(benchClass, handlers.Noop())
	opts := testConfig()
	opts.Concurrency = 64
	w, err := New(q, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	goroutinesBefore := runtime.NumGoroutine()

	// The heap is read while the worker runs (the leaked contexts hung off
	// the worker's long-lived job context, which Run cancels at the end).
	var first, last atomic.Uint64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		claimed := func(n int) func() bool { return func() bool { return w.Claimed() >= int64(n) } }
		if testwait.Poll(5*time.Minute, claimed(jobs/10)) {
			first.Store(liveHeap())
		}
		if testwait.Poll(5*time.Minute, claimed(jobs-jobs/20)) {
			last.Store(liveHeap())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	reason := w.Run(ctx)
	testwait.Recv(t, sampled, time.Minute, "the heap samples")
	if reason != StopEmpty {
		t.Fatalf("worker stopped for %s after %d jobs", reason, w.Claimed())
	}
	if got := w.Claimed(); got != int64(jobs) {
		t.Fatalf("processed %d jobs, want %d", got, jobs)
	}
	growth := int64(last.Load()) - int64(first.Load())
	t.Logf("%d jobs: live heap %d KiB after %d jobs, %d KiB after %d (growth %d KiB)",
		jobs, first.Load()>>10, jobs/10, last.Load()>>10, jobs-jobs/20, growth>>10)
	if growth > soakHeapBound {
		t.Errorf("live heap grew by %d KiB over %d jobs (bound %d KiB): something is kept per job",
			growth>>10, jobs-jobs/10-jobs/20, soakHeapBound>>10)
	}
	if after := settledGoroutines(goroutinesBefore); after > goroutinesBefore {
		t.Errorf("goroutines: %d before Run, %d after", goroutinesBefore, after)
	}
}

// soakHeapBound is the live-heap growth the soak test tolerates: GC and
// pool noise is a few hundred KiB; the leak it was written for grew the
// heap by about 11 MiB over the measured 85,000 jobs.
const soakHeapBound = 2 << 20

func pushNoops(t testing.TB, q *database.Queue, n int) {
	t.Helper()
	raw, err := payload.BuildObjectPayload(payload.NewCommand(benchClass, nil, payload.Dispatch{}), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items := make([]jobqueue.PushItem, n)
	for i := range items {
		items[i] = jobqueue.PushItem{Payload: raw}
	}
	if err := q.PushMany(context.Background(), items); err != nil {
		t.Fatal(err)
	}
}

// liveHeap is the heap in use after a forced collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// settledGoroutines waits up to a second for the goroutine count to fall
// to want (exiting goroutines take a moment) and returns it.
func settledGoroutines(want int) int {
	testwait.Poll(time.Second, func() bool { return runtime.NumGoroutine() <= want })
	return runtime.NumGoroutine()
}
