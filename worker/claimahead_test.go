package worker

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// aheadJobs pushes n jobs of classA numbered 0..n-1 and returns their
// uuids in id order.
func aheadJobs(t *testing.T, q *database.Queue, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		ids = append(ids, push(t, q, "", classA, phpserialize.Public("n", phpserialize.Int(int64(i)))))
	}
	return ids
}

// heldRowsUntouched: every row from index from on is unreserved at attempt 0.
func heldRowsUntouched(t *testing.T, q *database.Queue, from int) bool {
	t.Helper()
	rows := jobRows(t, q)
	for _, r := range rows[from:] {
		if r.Attempts != 0 || r.ReservedAt.Valid {
			return false
		}
	}
	return true
}

// blockFirst is a handler whose first job waits for a gate; every run is
// counted with the attempt it ran at.
type blockFirst struct {
	runs     *counter
	started  chan struct{}
	gate     *gate
	first    atomic.Bool
	attempts sync.Map // uuid -> attempt
}

func newBlockFirst(t *testing.T) *blockFirst {
	return &blockFirst{runs: newCounter(), started: make(chan struct{}), gate: newGate(t)}
}

func (b *blockFirst) handle(_ context.Context, job *handlers.Job) error {
	b.runs.add(job)
	b.attempts.Store(job.UUID, job.Attempts)
	if b.first.CompareAndSwap(false, true) {
		close(b.started)
		b.gate.wait()
	}
	return nil
}

// startBlocked pushes n jobs and runs a worker of concurrency 1 that
// claims `ahead` jobs ahead (held at most hold, 0 for the default) and
// whose first job blocks until h.gate opens; it returns once that job
// has started.
func startBlocked(t *testing.T, q *database.Queue, n, ahead int, hold time.Duration, stopWhenEmpty bool) (*blockFirst, *Worker, *workerRun, []string) {
	t.Helper()
	h := newBlockFirst(t)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, h.handle)
	ids := aheadJobs(t, q, n)
	cfg := testConfig()
	cfg.Concurrency = 1
	cfg.StopWhenEmpty = stopWhenEmpty
	w, _ := newTestWorker(t, q, reg, cfg, nil)
	w.ahead.fixed, w.ahead.hold = ahead, hold
	run := startWorker(w, time.Minute)
	testwait.Recv(t, h.started, 30*time.Second, "the first job to start")
	return h, w, run, ids
}

// TestJobClaimedAheadIsGivenBackWhenItWaits: a job claimed ahead behind a
// slow one is given back as it was (attempt not counted) once it has
// waited maxAheadHold, and runs once, at attempt 1, when a place frees.
func TestJobClaimedAheadIsGivenBackWhenItWaits(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		h, w, run, ids := startBlocked(t, q, 2, 1, 0, true)
		if rows := jobRows(t, q); len(rows) != 2 || rows[1].Attempts != 1 || !rows[1].ReservedAt.Valid {
			t.Fatalf("the second job was not claimed ahead with the first: %+v", rows)
		}
		testwait.Until(t, 30*time.Second, "the job claimed ahead to be given back", func() bool {
			return heldRowsUntouched(t, q, 1)
		})
		h.gate.open()
		if reason := run.wait(t); reason != StopEmpty {
			t.Fatalf("stopped for %s", reason)
		}
		a, _ := h.attempts.Load(ids[1])
		if h.runs.count(ids[0]) != 1 || h.runs.count(ids[1]) != 1 || a != int64(1) {
			t.Fatalf("runs %d and %d, the second at attempt %v; want each once, the second at attempt 1", h.runs.count(ids[0]), h.runs.count(ids[1]), a)
		}
		if st := w.Stats(); st.Claimed != 2 || st.Done != 2 {
			t.Fatalf("claimed %d, done %d; want 2 and 2 (a job given back before it ran is not counted)", st.Claimed, st.Done)
		}
	})
}

// TestJobsClaimedAheadGoBackOnStopAndPause: a stop or a pause gives back
// every job waiting for a place, untouched.
func TestJobsClaimedAheadGoBackOnStopAndPause(t *testing.T) {
	for _, how := range []string{"stop", "pause"} {
		t.Run(how, func(t *testing.T) {
			testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
				// Held for an hour: only the stop or the pause gives them back.
				h, w, run, ids := startBlocked(t, q, 4, 3, time.Hour, how == "pause")
				if how == "stop" {
					run.stop()
					h.gate.open()
					run.wait(t)
					if !heldRowsUntouched(t, q, 0) || len(jobRows(t, q)) != 3 {
						t.Fatalf("after the stop: %+v; want the job claimed ahead (and the two not claimed) as they were", jobRows(t, q))
					}
					if st := w.Stats(); st.Claimed != 1 {
						t.Fatalf("claimed %d; want 1", st.Claimed)
					}
					return
				}
				w.Pause()
				testwait.Until(t, 30*time.Second, "the jobs claimed ahead to be given back on pause", func() bool {
					return heldRowsUntouched(t, q, 1)
				})
				h.gate.open()
				w.Resume()
				run.wait(t)
				for _, id := range ids {
					if h.runs.count(id) != 1 {
						t.Fatalf("job %s ran %d times", id, h.runs.count(id))
					}
				}
			})
		})
	}
}

// TestClaimingAheadKeepsTheConcurrency: jobs claimed ahead wait for a
// place; the handler never runs more than Concurrency at once, and every
// job runs once.
func TestClaimingAheadKeepsTheConcurrency(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		var running, most atomic.Int64
		runs := newCounter()
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error {
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			runs.add(job)
			running.Add(-1)
			return nil
		})
		ids := aheadJobs(t, q, 60)
		cfg := testConfig()
		cfg.Concurrency = 4
		w, _ := newTestWorker(t, q, reg, cfg, nil)
		w.ahead.fixed = 4
		if reason := runWorker(t, w, time.Minute); reason != StopEmpty {
			t.Fatalf("stopped for %s", reason)
		}
		for _, id := range ids {
			if runs.count(id) != 1 {
				t.Fatalf("job %s ran %d times", id, runs.count(id))
			}
		}
		if most.Load() > 4 {
			t.Fatalf("%d jobs ran at once; the concurrency is 4", most.Load())
		}
	})
}

// TestHoldIsAQuarterOfAShortRetryAfter: a job claimed ahead is given back
// long before another worker may take it again, whatever retry_after is.
func TestHoldIsAQuarterOfAShortRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		retryAfter int
		want       time.Duration
	}{{90, maxAheadHold}, {2, 500 * time.Millisecond}} {
		cfg := testdb.Config(t, appconfig.EngineSQLite)
		cfg.RetryAfter = tc.retryAfter
		q := openAt(t, cfg, time.Now)
		if err := q.CreateTables(context.Background()); err != nil {
			t.Fatal(err)
		}
		w, _ := newTestWorker(t, q, handlers.NewRegistry(), testConfig(), nil)
		if got := w.maxHold(); got != tc.want {
			t.Fatalf("retry_after %d s: a job claimed ahead waits up to %s; want %s", tc.retryAfter, got, tc.want)
		}
	}
}

// drainAtConcurrencyOne pushes n jobs of classA, drains them with a
// worker of concurrency 1 whose handler is handle, and returns the
// worker, its store's claim counts and the jobs' uuids.
func drainAtConcurrencyOne(t *testing.T, q *database.Queue, n int, handle handlers.HandlerFunc) (*Worker, *deleteCounter, []string) {
	t.Helper()
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, handle)
	ids := aheadJobs(t, q, n)
	store := &deleteCounter{Store: q}
	cfg := testConfig()
	cfg.Concurrency = 1
	w, _ := newTestWorker(t, store, reg, cfg, nil)
	if reason := runWorker(t, w, time.Minute); reason != StopEmpty {
		t.Fatalf("stopped for %s", reason)
	}
	return w, store, ids
}

// TestFastJobsAtConcurrencyOneAreClaimedTwoAtATime: at concurrency 1
// nothing runs during a claim, so jobs faster than a claim are claimed
// two at a time (the second runs with no claim waited for); each runs
// once.
func TestFastJobsAtConcurrencyOneAreClaimedTwoAtATime(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		runs := newCounter()
		const n = 100
		w, store, ids := drainAtConcurrencyOne(t, q, n, func(_ context.Context, job *handlers.Job) error {
			runs.add(job)
			return nil
		})
		for _, id := range ids {
			if runs.count(id) != 1 {
				t.Fatalf("job %s ran %d times", id, runs.count(id))
			}
		}
		// The first claim takes one job (nothing has run yet), later ones
		// two; a loaded machine may make a job slower than a claim now
		// and then.
		if claims := store.claims.Load(); claims > n*3/4 {
			t.Fatalf("%d claims for %d fast jobs at concurrency 1; want them claimed two at a time", claims, n)
		}
		if st := w.Stats(); st.Claimed != n || st.Done != n {
			t.Fatalf("claimed %d, done %d; want %d", st.Claimed, st.Done, n)
		}
	})
}

// TestSlowJobsAtConcurrencyOneAreClaimedOneAtATime: jobs slower than a
// claim are never claimed ahead at concurrency 1 (a job claimed ahead
// would wait the whole of the running one).
func TestSlowJobsAtConcurrencyOneAreClaimedOneAtATime(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		const n = 4
		// Far longer than a claim takes, even on a loaded machine.
		w, store, _ := drainAtConcurrencyOne(t, q, n, func(ctx context.Context, _ *handlers.Job) error {
			select {
			case <-time.After(300 * time.Millisecond):
			case <-ctx.Done():
			}
			return nil
		})
		if claims := store.claims.Load(); claims != n {
			t.Fatalf("%d claims for %d slow jobs; want one each (none claimed ahead)", claims, n)
		}
		if st := w.Stats(); st.Done != n {
			t.Fatalf("done %d; want %d", st.Done, n)
		}
	})
}
