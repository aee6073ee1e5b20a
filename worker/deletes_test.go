package worker

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/store/database"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// deleteRecorder is the real store, recording the ids of every Delete
// call: the grouped deletes as the database receives them. It counts the
// claims too.
type deleteRecorder struct {
	jobqueue.Store
	mu     sync.Mutex
	calls  [][]int64
	at     []time.Time
	claims atomic.Int64
	// beforeFirst, if set, runs inside the first Delete call before it
	// reaches the database: a test holds the completer there.
	beforeFirst func(ids []int64)
}

func (d *deleteRecorder) Claim(ctx context.Context, queues []string, n int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	d.claims.Add(1)
	return d.Store.Claim(ctx, queues, n, opts)
}

func (d *deleteRecorder) Delete(ctx context.Context, jobs []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	d.mu.Lock()
	first := len(d.calls) == 0
	d.calls = append(d.calls, ids)
	d.at = append(d.at, time.Now())
	d.mu.Unlock()
	if first && d.beforeFirst != nil {
		d.beforeFirst(ids)
	}
	return d.Store.Delete(ctx, jobs)
}

func (d *deleteRecorder) deletes() [][]int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// barrier lets n handlers return together once all n are running (or
// after a minute, so a broken worker fails its test instead of hanging).
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	all     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait() {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(time.Minute):
	}
}

// TestJobsFinishingTogetherShareDeletes: 64 jobs run at once and finish
// together; their deletes reach the database in a few grouped statements,
// not one per job, and every row is gone.
func TestJobsFinishingTogetherShareDeletes(t *testing.T) {
	const n = 64
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		pushNumbered(t, q, classA, n)
		store := &deleteRecorder{Store: q}
		together := newBarrier(n)
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { together.wait(); return nil })
		cfg := testConfig()
		cfg.Concurrency = n
		w, _ := newTestWorker(t, store, reg, cfg, nil)
		runWorker(t, w, time.Minute)

		if rows := jobRows(t, q); len(rows) != 0 {
			t.Fatalf("%d rows left, want every job deleted", len(rows))
		}
		if st := w.Stats(); st.Done != n {
			t.Fatalf("stats %+v, want %d done", st, n)
		}
		calls := store.deletes()
		deleted := 0
		for _, ids := range calls {
			deleted += len(ids)
		}
		if deleted != n {
			t.Fatalf("deletes carried %d jobs, want each of the %d once", deleted, n)
		}
		if len(calls) > n/8 {
			t.Fatalf("%d deletes for %d jobs finishing together (sizes %v), want them grouped", len(calls), n, sizes(calls))
		}
	})
}

func sizes(calls [][]int64) []int {
	out := make([]int, len(calls))
	for i, ids := range calls {
		out[i] = len(ids)
	}
	return out
}

// TestALoneJobIsDeletedAtOnce: on an idle worker that keeps running, a
// single job's row is gone right after its handler returns: its delete
// waits for no batch to fill and no worker to stop.
func TestALoneJobIsDeletedAtOnce(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		store := &deleteRecorder{Store: q}
		returned := make(chan time.Time, 1)
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { returned <- time.Now(); return nil })
		cfg := testConfig()
		cfg.StopWhenEmpty = false
		cfg.Concurrency = 8
		w, _ := newTestWorker(t, store, reg, cfg, nil)
		run := startWorker(w, time.Minute)
		defer run.wait(t)
		defer run.stop()

		// Idle: the worker has claimed and found nothing a few times.
		testwait.Until(t, 30*time.Second, "idle claims", func() bool { return store.claims.Load() >= 3 })
		push(t, q, "", classA)
		handled := testwait.Recv(t, returned, 30*time.Second, "the job to run")
		testwait.Until(t, 5*time.Second, "the job's row to be deleted with the worker running", func() bool { return len(jobRows(t, q)) == 0 })
		store.mu.Lock()
		defer store.mu.Unlock()
		if len(store.calls) != 1 || len(store.calls[0]) != 1 {
			t.Fatalf("deletes %v, want the one job's alone", store.calls)
		}
		// Not a timing claim: the delete started within the spacing
		// between two deletes (it had nothing to wait for), with slack
		// for a loaded machine.
		if waited := store.at[0].Sub(handled); waited > deleteSpacing+time.Second {
			t.Fatalf("the delete started %s after the handler returned", waited)
		}
	})
}

// TestLostReservationsInABatch: of 16 jobs finishing together, two were
// reclaimed by another worker while they ran. Their batch deletes the 14
// still held, reports the two lost (counted, logged, left as the other
// worker has them) and does not retry them.
func TestLostReservationsInABatch(t *testing.T) {
	const n = 16
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		pushNumbered(t, q, classA, n)
		store := &deleteRecorder{Store: q}
		together := newBarrier(n)
		// Jobs 3 and 11 are reclaimed by another worker; they and job 0
		// (held) finish only once the first delete has started, and that
		// delete waits until their deletes are queued: the next delete
		// carries both lost jobs and at least one held one, whatever the
		// scheduling.
		firstDelete := make(chan struct{})
		var w *Worker
		store.beforeFirst = func(ids []int64) {
			close(firstDelete)
			if !testwait.Poll(time.Minute, func() bool { return len(w.completer.deletes) == n-len(ids) }) {
				t.Errorf("the deletes of the last jobs were never queued")
			}
		}
		reg := handlers.NewRegistry()
		var reclaimed []int64
		var mu sync.Mutex
		reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error {
			var cmd struct {
				I int64 `php:"i"`
			}
			if err := job.Decode(&cmd); err != nil {
				return err
			}
			if cmd.I == 3 || cmd.I == 11 {
				reclaimAsAnotherWorker(t, q, job.ID)
				mu.Lock()
				reclaimed = append(reclaimed, job.ID)
				mu.Unlock()
			}
			together.wait()
			if cmd.I == 0 || cmd.I == 3 || cmd.I == 11 {
				select {
				case <-firstDelete:
				case <-time.After(time.Minute):
					t.Errorf("no delete started while job %d waited", cmd.I)
				}
			}
			return nil
		})
		cfg := testConfig()
		cfg.Concurrency = n
		cfg.Metrics = NewMetrics(prometheus.NewRegistry())
		var logs *logBuffer
		w, logs = newTestWorker(t, store, reg, cfg, nil)
		runWorker(t, w, time.Minute)

		slices.Sort(reclaimed)
		var left []int64
		for _, r := range jobRows(t, q) {
			left = append(left, r.ID)
			if r.Attempts != 2 || !r.ReservedAt.Valid {
				t.Errorf("row %d changed: %+v", r.ID, r)
			}
		}
		if len(reclaimed) != 2 || !slices.Equal(left, reclaimed) {
			t.Fatalf("rows left %v, want only the reclaimed %v", left, reclaimed)
		}
		if st := w.Stats(); st.Done != n-2 || st.Lost != 2 {
			t.Fatalf("stats %+v, want %d done and 2 lost", st, n-2)
		}
		if got := testutil.ToFloat64(cfg.Metrics.lost.WithLabelValues("delete")); got != 2 {
			t.Errorf("laraworker_lost_reservations_total{op=delete} = %v, want 2", got)
		}
		if c := strings.Count(logs.String(), "reservation lost"); c != 2 {
			t.Errorf("%d reservation lost lines, want 2", c)
		}
		// The lost jobs were found by a delete shared with a held job.
		calls := store.deletes()
		mixed := slices.ContainsFunc(calls, func(ids []int64) bool {
			lost := slices.ContainsFunc(ids, func(id int64) bool { return slices.Contains(reclaimed, id) })
			held := slices.ContainsFunc(ids, func(id int64) bool { return !slices.Contains(reclaimed, id) })
			return lost && held
		})
		if !mixed {
			t.Errorf("no delete carried both a lost job and a held one: %v", calls)
		}
	})
}
