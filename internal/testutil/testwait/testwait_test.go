package testwait

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	Until(t, 10*time.Second, "three increments", func() bool { return n.Load() == 3 })
}

func TestPollGivesUpAfterTheTimeout(t *testing.T) {
	start := time.Now()
	if Poll(30*time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition that never holds was reported as holding")
	}
	if waited := time.Since(start); waited < 30*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("gave up after %s, want about 30ms", waited)
	}
}

func TestRecvReturnsTheValue(t *testing.T) {
	ch := make(chan string, 1)
	ch <- "job"
	if got := Recv(t, ch, time.Second, "the job"); got != "job" {
		t.Fatalf("got %q", got)
	}
}

// failRecorder records a Fatalf instead of ending the test.
type failRecorder struct {
	testing.TB
	failed atomic.Bool
}

func (f *failRecorder) Helper() {}
func (f *failRecorder) Fatalf(string, ...any) {
	f.failed.Store(true)
	panic(errStop)
}

type stop struct{}

var errStop = stop{}

// fails runs fn with a recorder and reports whether it called Fatalf.
func fails(t *testing.T, fn func(tb testing.TB)) bool {
	t.Helper()
	rec := &failRecorder{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != errStop {
				panic(r)
			}
		}()
		fn(rec)
	}()
	return rec.failed.Load()
}

func TestRecvFailsOnTimeoutNotOnClose(t *testing.T) {
	if !fails(t, func(tb testing.TB) { Recv(tb, make(chan int), 10*time.Millisecond, "nothing") }) {
		t.Error("a receive that timed out did not fail the test")
	}
	closed := make(chan struct{})
	close(closed)
	if fails(t, func(tb testing.TB) { Recv(tb, closed, time.Second, "the close") }) {
		t.Error("a closed channel failed the test: closing is a signal")
	}
	if !fails(t, func(tb testing.TB) { Until(tb, 10*time.Millisecond, "never", func() bool { return false }) }) {
		t.Error("a condition that never held did not fail the test")
	}
}
