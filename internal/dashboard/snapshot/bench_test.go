package snapshot

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/internal/testdash"
)

// BenchmarkRefresh times one background refresh of warm caches over the
// dashboard benchmark's large tables (internal/testdash, on MariaDB with
// LARAWORKER_BENCH_DASHBOARD=1): the reads and the summary, the cost a
// running dashboard puts on the database and itself every few seconds.
//
//	go test -run '^$' -bench Refresh -benchtime 20x ./internal/dashboard/snapshot/
func BenchmarkRefresh(b *testing.B) {
	q := testdash.BenchQueue(b)
	s := newTestSnapshot(b, q)
	warm(b, s)
	for b.Loop() {
		s.refreshOnce(context.Background())
	}
}

// warm runs refreshes until the caches hold both tables and the rolling
// pass has gone round once, and reports what that took.
func warm(b *testing.B, s *Snapshot) {
	b.Helper()
	start := time.Now()
	n := 0
	// A larger pass per refresh only to get there sooner; the measured
	// refreshes use the default budget.
	src := sqlSource(s)
	savedJobs, savedFailed := src.budget, s.failedBudget
	src.budget.rollingRows, s.failedBudget.rollingRows = 50000, 50000
	defer func() { src.budget, s.failedBudget = savedJobs, savedFailed }()
	for {
		s.refreshOnce(context.Background())
		n++
		sum := s.cur.Load()
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
