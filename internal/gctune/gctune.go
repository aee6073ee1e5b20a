// Package gctune sizes Go's garbage collector for a worker process.
//
// A worker's live heap is small (a few MB: its slots, caches and the
// jobs in flight) while it allocates for every job (the payload's
// fields, the command's decoded values, contexts and timers). With Go's
// default GOGC of 100 it collects each time it has allocated about its
// live heap again: at 128 concurrent no-op jobs a quarter of the
// process's instructions went to the collector (valgrind's callgrind,
// docs/PERFORMANCE.md). A collection every few MB buys nothing for a
// process whose heap is that small.
//
// So after each collection the tuner lets the heap grow by a fixed
// headroom (32 MiB, or less under a small --memory: Headroom) before the next one,
// within GOGC 100 to 400: a small live heap gets up to GOGC 400, a live
// heap as large as the headroom or larger gets Go's default. What the
// process may hold beyond Go's default is thus bounded by the headroom,
// whatever the jobs hold: a job with a 100 MB payload collects as
// before. GOGC set in the environment wins: the tuner then does nothing.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Bounds of the GC percent the tuner sets.
const (
	minPercent = 100 // Go's default
	maxPercent = 400 // beyond it the collector's share hardly falls
)

// DefaultHeadroom is how far the heap may grow past the live heap
// between collections.
const DefaultHeadroom = 32 << 20

// Headroom is DefaultHeadroom, or under a memory limit (--memory, in MB;
// 0 or less: none) a quarter of the room the limit leaves above rss, the
// process's resident bytes at start, when that is smaller. --memory is
// checked against the RSS, which holds the binary's code and the
// runtime's own memory before the first job (about 30 MB of a 48 MB
// limit in the big-job test): a quarter of the limit itself brought a
// worker past it on small jobs alone, a stop (status 12) every few
// hundred jobs.
func Headroom(memoryMB int, rss uint64) uint64 {
	h := uint64(DefaultHeadroom)
	if memoryMB <= 0 {
		return h
	}
	limit := uint64(memoryMB) << 20
	if rss >= limit {
		return 0
	}
	return min(h, (limit-rss)/4)
}

// Tuner adjusts the GC percent after each collection.
type Tuner struct {
	headroom uint64
	stopped  atomic.Bool
	mu       sync.Mutex
	percent  int
	before   int // the GC percent before Start, restored by Stop
	sample   []metrics.Sample
}

// Start tunes the collector until Stop; nil when GOGC is set in the
// environment (the user's setting stands).
func Start(headroom uint64) *Tuner {
	if os.Getenv("GOGC") != "" {
		return nil
	}
	t := &Tuner{headroom: headroom, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.mu.Lock()
	t.before = debug.SetGCPercent(maxPercent)
	t.percent = maxPercent
	t.mu.Unlock()
	t.arm()
	return t
}

// Stop restores the GC percent Start found. Safe on nil.
func (t *Tuner) Stop() {
	if t == nil || t.stopped.Swap(true) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	debug.SetGCPercent(t.before)
}

// Percent is the GC percent the tuner set last.
func (t *Tuner) Percent() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.percent
}

// percentFor is the GC percent that lets a heap of live bytes grow by
// headroom, within the bounds.
func percentFor(live, headroom uint64) int {
	if live == 0 {
		return maxPercent
	}
	return int(min(max(headroom*100/live, minPercent), maxPercent))
}

// arm runs afterGC once the next collection has finished: a finalizer
// runs after the collection that found its object unreachable. The
// object is 32 bytes so that the tiny allocator, whose blocks may never be
// finalized, does not take it.
func (t *Tuner) arm() {
	s := new([32]byte)
	runtime.SetFinalizer(s, func(*[32]byte) {
		if t.stopped.Load() {
			return
		}
		t.afterGC()
		t.arm()
	})
}

func (t *Tuner) afterGC() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	p := percentFor(t.sample[0].Value.Uint64(), t.headroom)
	t.mu.Lock()
	defer t.mu.Unlock()
	if p != t.percent && !t.stopped.Load() {
		debug.SetGCPercent(p)
		t.percent = p
	}
}
