package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testwait"
)

// gcPercent reads the process's GC percent without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// collectUntil runs collections until cond holds (the tuner runs after
// each, on the finalizer goroutine).
func collectUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 30*time.Second, what, func() bool {
		runtime.GC()
		return cond()
	})
}

// TestSmallHeapGetsHeadroomLargeHeapGoDefault: with a small live heap the
// collector runs at GOGC 400; with a live heap larger than the headroom
// at Go's default, 100; and back when the heap shrinks. Stop restores the
// setting found.
func TestSmallHeapGetsHeadroomLargeHeapGoDefault(t *testing.T) {
	t.Setenv("GOGC", "")
	before := gcPercent()
	tu := Start(8 << 20)
	if tu == nil {
		t.Fatal("not started with GOGC unset")
	}
	collectUntil(t, "GOGC 400 for a small heap", func() bool { return gcPercent() == 400 && tu.Percent() == 400 })

	big := make([][]byte, 64)
	for i := range big {
		big[i] = make([]byte, 1<<20) // 64 MiB live, 8 times the headroom
	}
	collectUntil(t, "Go's default for a heap larger than the headroom", func() bool { return gcPercent() == 100 })
	runtime.KeepAlive(big)
	big = nil

	collectUntil(t, "GOGC 400 again once the heap shrank", func() bool { return gcPercent() == 400 })
	tu.Stop()
	if got := gcPercent(); got != before {
		t.Fatalf("GC percent %d after Stop; want %d, as before Start", got, before)
	}
	runtime.GC()
	if got := gcPercent(); got != before {
		t.Fatalf("GC percent %d after a collection after Stop; want %d", got, before)
	}
}

// TestGOGCInTheEnvironmentWins: a GOGC the user set is left alone.
func TestGOGCInTheEnvironmentWins(t *testing.T) {
	t.Setenv("GOGC", "150")
	before := gcPercent()
	if tu := Start(DefaultHeadroom); tu != nil {
		tu.Stop()
		t.Fatal("started although GOGC is set")
	}
	runtime.GC()
	if got := gcPercent(); got != before {
		t.Fatalf("GC percent %d; want %d untouched", got, before)
	}
}

func TestPercentFor(t *testing.T) {
	for _, tc := range []struct {
		live, headroom uint64
		want           int
	}{
		{0, 32 << 20, 400},
		{4 << 20, 32 << 20, 400},              // 800 capped
		{16 << 20, 32 << 20, 200},             // grows by the headroom
		{64 << 20, 32 << 20, 100},             // Go's default, never less
		{1 << 30, 32 << 20, 100},              // a large heap collects as before
		{10 << 20, Headroom(40, 0), 100},      // --memory 40: a 10 MiB headroom
		{2 << 20, Headroom(48, 28<<20), 250},  // --memory 48 at 28 MB resident: 5 MiB
		{2 << 20, Headroom(48, 50<<20), 100},  // past the limit already: Go's default
		{2 << 20, Headroom(0, 28<<20), 400},   // no --memory: the default headroom
		{10 << 20, Headroom(-1, 28<<20), 320}, // nor with --memory disabled
	} {
		if got := percentFor(tc.live, tc.headroom); got != tc.want {
			t.Errorf("percentFor(%d, %d) = %d; want %d", tc.live, tc.headroom, got, tc.want)
		}
	}
}
