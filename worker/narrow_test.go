package worker

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
)

// The tests of NarrowWhenIdle set GOMAXPROCS, which is the process's:
// none of them runs in parallel with other tests.

// withThreads sets GOMAXPROCS to n and a short narrowAfter for one test,
// and restores both (GOMAXPROCS to the runtime's default) after it.
func withThreads(t *testing.T, n int) {
	t.Helper()
	runtime.GOMAXPROCS(n)
	was := narrowAfter
	narrowAfter = 200 * time.Millisecond
	t.Cleanup(func() {
		narrowAfter = was
		runtime.SetDefaultGOMAXPROCS()
	})
}

// idleConfig waits on the queue the way `work` does, with a short poll.
func idleConfig(narrow bool) Config {
	cfg := testConfig()
	cfg.Sleep, cfg.IdlePoll, cfg.StopWhenEmpty = 10*time.Second, 20*time.Millisecond, false
	cfg.NarrowWhenIdle = narrow
	return cfg
}

// TestIdleWorkerRunsOnOneThreadAndWidensBeforeAJob: a worker with
// NarrowWhenIdle that has run nothing for a while narrows the process to
// one thread; a job pushed then runs with every thread the process had
// (a value set with runtime.GOMAXPROCS here, 3), the process narrows
// again once the worker is idle, and it has its threads back when the
// worker stops.
func TestIdleWorkerRunsOnOneThreadAndWidensBeforeAJob(t *testing.T) {
	withThreads(t, 3)
	q := testdb.Open(t, testdb.Config(t, "sqlite"))
	threads := make(chan int, 1)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error {
		threads <- runtime.GOMAXPROCS(0)
		return nil
	})
	cfg := idleConfig(true)
	// One place: the loop waits for it while the job runs, so nothing
	// but the claim that found the job can have widened the process.
	cfg.Concurrency = 1
	w, _ := newTestWorker(t, q, reg, cfg, nil)
	run := startWorker(w, time.Minute)
	narrowed := func() bool { return runtime.GOMAXPROCS(0) == 1 }
	testwait.Until(t, 10*time.Second, "the idle worker to narrow the process to one thread", narrowed)

	push(t, q, "", classA)
	select {
	case n := <-threads:
		if n != 3 {
			t.Errorf("the job ran with GOMAXPROCS %d, want the 3 the process had before it narrowed", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the job pushed to the narrowed worker did not run within 10 s")
	}
	testwait.Until(t, 10*time.Second, "the worker to narrow again after the job", narrowed)

	run.stop()
	run.wait(t)
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Errorf("GOMAXPROCS %d after the worker stopped, want 3", n)
	}
}

// TestABusyWorkerKeepsTheProcessWide: GOMAXPROCS is the process's, so a
// worker that did not ask for narrowing still keeps every thread while
// it runs a job; the process narrows once it too is idle. A process whose
// workers do not ask never narrows.
func TestABusyWorkerKeepsTheProcessWide(t *testing.T) {
	withThreads(t, 3)
	q := testdb.Open(t, testdb.Config(t, "sqlite"))
	release, running := make(chan struct{}), make(chan struct{}, 1)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(ctx context.Context, _ *handlers.Job) error {
		running <- struct{}{}
		<-release
		return nil
	})
	plain, _ := newTestWorker(t, q, reg, idleConfig(false), nil)
	plainRun := startWorker(plain, time.Minute)
	// Alone, the worker that does not ask leaves the process as it is
	// for many idle claims past narrowAfter.
	began := time.Now()
	testwait.Until(t, 10*time.Second, "idle claims past narrowAfter", func() bool {
		return time.Since(began) > 2*narrowAfter && plain.Stats().Loops >= 20
	})
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Fatalf("GOMAXPROCS %d with no worker asking for narrowing, want 3", n)
	}

	push(t, q, "", classA)
	<-running
	narrowing.mu.Lock()
	idleBefore := narrowing.idle
	narrowing.mu.Unlock()
	asks, _ := newTestWorker(t, q, handlers.NewRegistry(), idleConfig(true), nil)
	asksRun := startWorker(asks, time.Minute)
	testwait.Until(t, 10*time.Second, "the worker that asks to count as idle", func() bool {
		narrowing.mu.Lock()
		defer narrowing.mu.Unlock()
		return narrowing.idle > idleBefore
	})
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Errorf("GOMAXPROCS %d while the other worker runs a job, want 3", n)
	}

	close(release)
	testwait.Until(t, 10*time.Second, "both workers idle to narrow the process", func() bool { return runtime.GOMAXPROCS(0) == 1 })
	asksRun.stop()
	asksRun.wait(t)
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Errorf("GOMAXPROCS %d after the worker that asked stopped, want 3", n)
	}
	plainRun.stop()
	plainRun.wait(t)
}
