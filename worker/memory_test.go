package worker

import (
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/procmem"
)

// TestMemoryIsReadAtMostEveryRSSEvery: --memory's reading of the
// process's RSS is kept for rssEvery (a read after each claim was most of
// a no-op job's CPU at --concurrency 1), then read again: a limit crossed
// meanwhile stops the worker at the next loop after it.
func TestMemoryIsReadAtMostEveryRSSEvery(t *testing.T) {
	if procmem.RSS() == 0 {
		t.Skip("no RSS to read here (no /proc)")
	}
	w := &Worker{}
	w.cfg.MemoryMB = 1 << 20 // 1 TB: not reached
	if w.memoryExceeded() {
		t.Fatal("a 1 TB limit is reached")
	}
	w.cfg.MemoryMB = 1 // reached by any process
	if w.memoryExceeded() {
		t.Fatalf("the RSS was read again within %s of the last reading", rssEvery)
	}
	w.rss.readAt = time.Now().Add(-rssEvery)
	if !w.memoryExceeded() {
		t.Fatalf("a 1 MB limit is not seen %s after the last reading", rssEvery)
	}
}
