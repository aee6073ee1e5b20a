package worker

import (
	"time"

	"github.com/laraworker/laraworker/internal/procmem"
)

// rssEvery is how often, at most, the loop reads the process's resident
// set size for --memory. Laravel's check is memory_get_usage() after each
// job, a read of PHP's own counter; Go's is a read of /proc/self/statm
// (a system call), which after each claim made a no-op job at
// --concurrency 1 cost 7-60% more CPU, the more the busier the machine
// (BenchmarkNoopPath/c1-memory; docs/PERFORMANCE.md). A worker over its
// limit stops at most this much later.
const rssEvery = 100 * time.Millisecond

// memoryExceeded is --memory's test; only the loop calls it.
func (w *Worker) memoryExceeded() bool {
	if now := time.Now(); now.Sub(w.rss.readAt) >= rssEvery {
		w.rss.readAt = now
		w.rss.over = float64(procmem.RSS())/(1<<20) >= float64(w.cfg.MemoryMB)
	}
	return w.rss.over
}
