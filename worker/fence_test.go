package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const fixtureBatchID = "a35820df-95af-46d7-b2c8-42622312a3de" // in the batch fixtures' commands

// reclaimAsAnotherWorker does to a running job's row what Laravel's pop
// does after retry_after: markJobAsReserved with a later reserved_at and
// one more attempt.
func reclaimAsAnotherWorker(t *testing.T, q *database.Queue, id int64) {
	t.Helper()
	exec(t, q, fmt.Sprintf("update %s set reserved_at = reserved_at + %d, attempts = attempts + 1 where id = ?",
		q.Config().JobsTable, q.Config().RetryAfter+1), id)
}

// TestALostReservationDropsTheOutcome: while the handler runs, another
// worker reclaims the job (or reclaims and finishes it). Whatever the
// handler decides, the worker writes nothing: no delete of the other
// worker's row, no released copy, no failed_jobs row, no next chain link,
// no batch counter. It logs the job once and counts it by write.
func TestALostReservationDropsTheOutcome(t *testing.T) {
	type tc struct {
		name    string
		op      string // the write that finds out
		queue   string
		raw     func(t *testing.T) []byte
		handler func(context.Context, *handlers.Job) error
	}
	plain := func(t *testing.T) []byte {
		raw, err := payload.BuildObjectPayload(phpserialize.Object(classA), payload.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	cases := []tc{
		{"success", "delete", "", plain, func(context.Context, *handlers.Job) error { return nil }},
		{"release", "release", "", plain, func(_ context.Context, job *handlers.Job) error { job.Release(0); return nil }},
		{"failure", "fail", "", plain, func(context.Context, *handlers.Job) error { return errors.New("boom") }},
		{"chain link success", "finish", "chains", func(t *testing.T) []byte { return fixture(t, "chain.json") },
			func(context.Context, *handlers.Job) error { return nil }},
		{"batch member success", "finish", "", func(t *testing.T) []byte { return fixture(t, "batch-member.json") },
			func(context.Context, *handlers.Job) error { return nil }},
		{"batch member failure", "fail", "", func(t *testing.T) []byte { return fixture(t, "batch-member.json") },
			func(context.Context, *handlers.Job) error { return errors.New("boom") }},
	}
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		for _, c := range cases {
			for _, finished := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/finished elsewhere %v", c.name, finished), func(t *testing.T) {
					exec(t, q, "delete from "+q.Config().JobsTable)
					exec(t, q, "delete from "+q.Config().BatchesTable)
					insertBatch(t, q, fixtureBatchID, 2, fixture(t, "batch.options.txt"))
					raw := c.raw(t)
					p, _ := payload.Parse(raw)
					id := pushRaw(t, q, c.queue, raw)
					reg := handlers.NewRegistry()
					handler := func(ctx context.Context, job *handlers.Job) error {
						reclaimAsAnotherWorker(t, q, id)
						if finished {
							exec(t, q, "delete from "+q.Config().JobsTable+" where id = ?", id)
						}
						return c.handler(ctx, job)
					}
					reg.HandleFunc(p.DisplayName, handler)
					cfg := testConfig()
					cfg.Queues = []string{c.queue}
					cfg.MaxJobs = 1
					cfg.Metrics = NewMetrics(prometheus.NewRegistry())
					w, logs := newTestWorker(t, q, reg, cfg, nil)
					runWorker(t, w, 30*time.Second)

					rows := jobRows(t, q)
					if finished && len(rows) != 0 {
						t.Fatalf("rows written for a job another worker finished: %+v", rows)
					}
					if !finished && (len(rows) != 1 || rows[0].ID != id || rows[0].Attempts != 2 || !rows[0].ReservedAt.Valid) {
						t.Fatalf("the other worker's row changed: %+v", rows)
					}
					if f := failedRows(t, q); len(f) != 0 {
						t.Fatalf("failed_jobs rows for a lost reservation: %d", len(f))
					}
					if b := batchState(t, q, fixtureBatchID); b.PendingJobs != 2 || b.FailedJobs != 0 || b.CancelledAt != nil {
						t.Fatalf("batch counters changed for a lost reservation: %+v", b)
					}
					if got := testutil.ToFloat64(cfg.Metrics.lost.WithLabelValues(c.op)); got != 1 {
						t.Errorf("laraworker_lost_reservations_total{op=%q} = %v, want 1", c.op, got)
					}
					if st := w.Stats(); st.Lost != 1 || st.Done+st.Failed+st.Released != 0 {
						t.Errorf("stats %+v, want 1 lost and nothing written", st)
					}
					line := logLine(t, logs.String(), "reservation lost")
					mustContain(t, "log line", line, p.UUID, strings.ReplaceAll(p.DisplayName, `\`, `\\`), fmt.Sprintf(`"id":%d`, id), `"op":"`+c.op+`"`)
					if n := strings.Count(logs.String(), "reservation lost"); n != 1 {
						t.Errorf("logged %d times, want once", n)
					}
				})
			}
		}
	})
}

// logLine returns the one log line containing s.
func logLine(t *testing.T, logs, s string) string {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	t.Fatalf("no log line contains %q:\n%s", s, logs)
	return ""
}

// TestLeaseRefreshKeepsTheToken: a job running through several refreshes
// is deleted with the token of the last one (a worker that kept the
// claim's token would find its own reservation "lost"). The worker and its
// store run on a fake clock: each second the test advances is a refresh.
func TestLeaseRefreshKeepsTheToken(t *testing.T) {
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dbcfg := testdb.Config(t, engine)
			q := testdb.Open(t, dbcfg)
			cfg := testConfig()
			fake := withFakeClock(&cfg)
			wq := openAt(t, dbcfg, fake.Now)
			started := make(chan struct{}, 1)
			done := newGate(t)
			reg := handlers.NewRegistry()
			reg.HandleFunc(classA, func(context.Context, *handlers.Job) error {
				started <- struct{}{}
				done.wait()
				return nil
			})
			pushRaw(t, wq, "", objectPayload(t, classA))
			cfg.LeaseEvery = time.Second
			cfg.Metrics = NewMetrics(prometheus.NewRegistry())
			w, logs := newTestWorker(t, wq, reg, cfg, nil)
			run := startWorker(w, 30*time.Second)
			testwait.Recv(t, started, 30*time.Second, "the job to start")
			for i := 1; i <= 3; i++ {
				fake.Advance(time.Second)
				testwait.Until(t, 30*time.Second, fmt.Sprintf("refresh %d", i), func() bool { return testutil.ToFloat64(cfg.Metrics.leases) == float64(i) })
			}
			done.open()
			run.wait(t)
			if rows := jobRows(t, q); len(rows) != 0 {
				t.Fatalf("rows left: %+v", rows)
			}
			if st := w.Stats(); st.Done != 1 || st.Lost != 0 {
				t.Fatalf("stats %+v, want the job done, nothing lost:\n%s", st, logs)
			}
		})
	}
}

// TestLeaseRefreshFindsALostReservation: another worker reclaims a running
// job; the next refresh finds out, cancels the handler (the job runs
// elsewhere now) with a cause that says so, and the outcome is dropped.
func TestLeaseRefreshFindsALostReservation(t *testing.T) {
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dbcfg := testdb.Config(t, engine)
			q := testdb.Open(t, dbcfg)
			cfg := testConfig()
			fake := withFakeClock(&cfg)
			wq := openAt(t, dbcfg, fake.Now) // the worker's store: its time is the worker's
			var id int64
			reclaimed := make(chan struct{}, 1)
			cause := make(chan error, 1)
			reg := handlers.NewRegistry()
			reg.HandleFunc(classA, func(ctx context.Context, job *handlers.Job) error {
				reclaimAsAnotherWorker(t, q, id)
				reclaimed <- struct{}{}
				select {
				case <-ctx.Done():
					cause <- context.Cause(ctx)
				case <-time.After(30 * time.Second):
					cause <- nil
				}
				job.Release(0) // what a handler cut short might do
				return nil
			})
			id = pushRaw(t, wq, "", objectPayload(t, classA))
			cfg.LeaseEvery = time.Second
			cfg.Metrics = NewMetrics(prometheus.NewRegistry())
			w, logs := newTestWorker(t, wq, reg, cfg, nil)
			run := startWorker(w, 30*time.Second)
			testwait.Recv(t, reclaimed, 30*time.Second, "the job to run and be reclaimed")
			fake.Advance(time.Second) // the next refresh
			if err := testwait.Recv(t, cause, 30*time.Second, "the handler's context to end"); !errors.Is(err, errReservationLost) {
				t.Fatalf("handler context ended with %v, want the lost reservation", err)
			}
			run.wait(t)
			if rows := jobRows(t, q); len(rows) != 1 || rows[0].Attempts != 2 {
				t.Fatalf("the other worker's row changed: %+v", rows)
			}
			if got := testutil.ToFloat64(cfg.Metrics.lost.WithLabelValues("extend")); got != 1 {
				t.Fatalf("lost{op=extend} = %v, want 1:\n%s", got, logs)
			}
			if st := w.Stats(); st.Lost != 1 || st.Released != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func objectPayload(t *testing.T, class string, props ...phpserialize.Entry) []byte {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(class, props...), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestBatchFailureSurvivesFailingWrites: recording a batch member's
// failure needs the batch's options; the read of the batch and the write
// itself fail several times. The failure is still recorded: the batch
// ends cancelled and finished, with Laravel's counters.
func TestBatchFailureSurvivesFailingWrites(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		insertBatch(t, q, fixtureBatchID, 2, fixture(t, "batch.options.txt"))
		store := newFaultStore(q)
		failing, _ := payload.Parse(fixture(t, "batch-member-2.json"))
		var w *Worker
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\BatchMemberJob`, func(_ context.Context, job *handlers.Job) error {
			if job.UUID != failing.UUID {
				return nil
			}
			// The batch's options are no longer cached and every store call
			// of the failure's write fails a few times first.
			w.exec.batches.Forget()
			store.failNext("find-batch", 3)
			store.failNext("fail", 2)
			return errors.New("member failed")
		})
		pushRaw(t, q, "", fixture(t, "batch-member.json"))
		pushRaw(t, q, "", fixture(t, "batch-member-2.json"))
		cfg := testConfig()
		cfg.Concurrency = 1
		cfg.Batches = store
		cfg.Metrics = NewMetrics(prometheus.NewRegistry())
		w, _ = newTestWorker(t, store, reg, cfg, nil)
		runWorker(t, w, time.Minute)
		b := batchState(t, q, fixtureBatchID)
		if b.PendingJobs != 1 || b.FailedJobs != 1 || !slices.Equal(b.FailedJobIDs, []string{failing.UUID}) || b.CancelledAt == nil || b.FinishedAt == nil {
			t.Fatalf("batch after a success and a failure recorded through failing writes: %+v", b)
		}
		if f := failedRows(t, q); len(f) != 1 || f[0].UUID != failing.UUID {
			t.Fatalf("failed_jobs: %+v", f)
		}
		if got := testutil.ToFloat64(cfg.Metrics.writeErrors.WithLabelValues("fail")); got != 5 {
			t.Fatalf("write errors of the failure = %v, want 3 batch reads + 2 writes", got)
		}
	})
}

// retryAfterStore is a store (an empty memStore) whose retry_after is
// configurable.
type retryAfterStore struct {
	jobqueue.Store
	d time.Duration
}

func (s retryAfterStore) RetryAfter() time.Duration { return s.d }

// TestRetryAfterZeroIsRefused: without a reservation that holds, writes
// cannot be fenced; the worker says so instead of running.
func TestRetryAfterZeroIsRefused(t *testing.T) {
	_, err := New(retryAfterStore{Store: &memStore{}, d: 0}, handlers.NewRegistry(), Config{})
	if err == nil || !strings.Contains(err.Error(), "retry_after is 0s") || !strings.Contains(err.Error(), "DB_QUEUE_RETRY_AFTER") {
		t.Fatalf("New with retry_after 0: %v", err)
	}
	if _, err := New(retryAfterStore{Store: &memStore{}, d: time.Second}, handlers.NewRegistry(), Config{}); err != nil {
		t.Fatalf("New with retry_after 1s: %v", err)
	}
}
