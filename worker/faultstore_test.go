package worker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/cache/dbcache"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// faultStore is the real store with injected failures: each named
// operation fails the next n times it is called, before reaching the
// database, the way a dropped connection or a lock timeout would make it
// fail. It lets the completion paths be tested without a proxy. It also
// stands in for the batch repository ("find-batch").
type faultStore struct {
	jobqueue.Store
	mu    sync.Mutex
	fails map[string]int
	calls map[string]int
	// before runs before an operation reaches the store (tests use it to
	// let another worker act first).
	before func(op string)
}

var errInjected = errors.New("injected: server has gone away")

func newFaultStore(s jobqueue.Store) *faultStore {
	return &faultStore{Store: s, fails: map[string]int{}, calls: map[string]int{}}
}

// failNext makes the next n calls of op fail.
func (f *faultStore) failNext(op string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fails[op] = n
}

func (f *faultStore) inject(op string) error {
	f.mu.Lock()
	f.calls[op]++
	before := f.before
	fail := f.fails[op] > 0
	if fail {
		f.fails[op]--
	}
	f.mu.Unlock()
	if before != nil {
		before(op)
	}
	if fail {
		return errInjected
	}
	return nil
}

func (f *faultStore) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *faultStore) Claim(ctx context.Context, queues []string, n int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	if err := f.inject("claim"); err != nil {
		return nil, err
	}
	return f.Store.Claim(ctx, queues, n, opts)
}

func (f *faultStore) Delete(ctx context.Context, jobs []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	if err := f.inject("delete"); err != nil {
		return nil, err
	}
	return f.Store.Delete(ctx, jobs)
}

func (f *faultStore) Finish(ctx context.Context, job jobqueue.JobRow, fu jobqueue.Followup) error {
	if err := f.inject("finish"); err != nil {
		return err
	}
	return f.Store.Finish(ctx, job, fu)
}

func (f *faultStore) Release(ctx context.Context, job jobqueue.JobRow, delay time.Duration) error {
	if err := f.inject("release"); err != nil {
		return err
	}
	return f.Store.Release(ctx, job, delay)
}

func (f *faultStore) Fail(ctx context.Context, job jobqueue.JobRow, uuid, exception string, fu jobqueue.Followup) error {
	if err := f.inject("fail"); err != nil {
		return err
	}
	return f.Store.Fail(ctx, job, uuid, exception, fu)
}

func (f *faultStore) Unreserve(ctx context.Context, job jobqueue.JobRow) error {
	if err := f.inject("unreserve"); err != nil {
		return err
	}
	return f.Store.Unreserve(ctx, job)
}

func (f *faultStore) Extend(ctx context.Context, jobs []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	if err := f.inject("extend"); err != nil {
		return nil, err
	}
	return f.Store.Extend(ctx, jobs)
}

func (f *faultStore) FindBatch(ctx context.Context, id string) (jobqueue.Batch, error) {
	if err := f.inject("find-batch"); err != nil {
		return jobqueue.Batch{}, err
	}
	return f.Store.FindBatch(ctx, id)
}

func TestFaultStoreIsAStore(t *testing.T) {
	var _ jobqueue.Store = (*database.Queue)(nil)
	var _ jobqueue.Cache = (*dbcache.Cache)(nil)
	var _ jobqueue.Store = newFaultStore(nil)
}

// Every outcome write that fails is retried until the store takes it:
// the job is deleted, released or failed exactly once, and the failures
// are counted by operation.
func TestOutcomeWritesAreRetriedUntilTheyLand(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	for _, c := range []struct {
		op      string
		handler func(context.Context, *handlers.Job) error
		props   []phpserialize.Entry
		check   func(t *testing.T, q *database.Queue)
	}{
		{"delete", func(context.Context, *handlers.Job) error { return nil }, nil,
			func(t *testing.T, q *database.Queue) {
				if n := len(jobRows(t, q)) + len(failedRows(t, q)); n != 0 {
					t.Fatalf("%d rows left, want the job deleted", n)
				}
			}},
		{"release", func(context.Context, *handlers.Job) error { return errors.New("try later") },
			[]phpserialize.Entry{phpserialize.Public("tries", phpserialize.Int(3)), phpserialize.Public("backoff", phpserialize.Int(60))},
			func(t *testing.T, q *database.Queue) {
				rows := jobRows(t, q)
				if len(rows) != 1 || rows[0].Attempts != 1 || rows[0].ReservedAt.Valid {
					t.Fatalf("want the job released once, attempts 1: %+v", rows)
				}
			}},
		{"fail", func(context.Context, *handlers.Job) error { return errors.New("bad input") }, nil,
			func(t *testing.T, q *database.Queue) {
				if f := failedRows(t, q); len(f) != 1 || !strings.Contains(f[0].Exception, "bad input") || len(jobRows(t, q)) != 0 {
					t.Fatalf("want one failed row and no job, got %d failed, %d jobs", len(f), len(jobRows(t, q)))
				}
			}},
	} {
		t.Run(c.op, func(t *testing.T) {
			q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
			store := newFaultStore(q)
			store.failNext(c.op, 3)
			reg := handlers.NewRegistry()
			reg.HandleFunc(classA, c.handler)
			push(t, q, "", classA, c.props...)
			promReg := prometheus.NewRegistry()
			cfg := testConfig()
			cfg.Metrics = NewMetrics(promReg)
			w, logs := newTestWorker(t, store, reg, cfg, nil)
			runWorker(t, w, 30*time.Second)
			c.check(t, q)
			if got := store.count(c.op); got != 4 {
				t.Errorf("%s called %d times, want 3 failures and 1 success", c.op, got)
			}
			if got := testutil.ToFloat64(cfg.Metrics.writeErrors.WithLabelValues(c.op)); got != 3 {
				t.Errorf("laraworker_write_errors_total{op=%q} = %v, want 3", c.op, got)
			}
			mustContain(t, "log", logs.String(), "database write succeeded after retries")
		})
	}
}

// A claim that fails is logged, counted and retried; nothing is lost.
func TestFailedClaimsAreRetried(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	store := newFaultStore(q)
	store.failNext("claim", 2)
	runs := newCounter()
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error { runs.add(job); return nil })
	uuid := push(t, q, "", classA)
	cfg := testConfig()
	cfg.Sleep = time.Millisecond
	w, logs := newTestWorker(t, store, reg, cfg, nil)
	runWorker(t, w, time.Minute)
	if runs.count(uuid) != 1 || len(jobRows(t, q)) != 0 {
		t.Fatalf("job ran %d times, %d rows left", runs.count(uuid), len(jobRows(t, q)))
	}
	if n := strings.Count(logs.String(), "claiming jobs failed; retrying"); n != 2 {
		t.Fatalf("%d claim failures logged, want 2", n)
	}
}

// The next link of a chain is pushed in the finished link's own write,
// which is retried as a whole: exactly one next link, and the finished
// one deleted.
func TestChainLinkIsPushedWithTheDelete(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	store := newFaultStore(q)
	store.failNext("finish", 2)
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\ChainLinkJob`, func(context.Context, *handlers.Job) error { return nil })
	pushRaw(t, q, "chains", fixture(t, "chain.json"))
	cfg := testConfig()
	cfg.Queues = []string{"chains"}
	cfg.MaxJobs = 1
	w, _ := newTestWorker(t, store, reg, cfg, nil)
	runWorker(t, w, 30*time.Second)
	rows := jobRows(t, q)
	if len(rows) != 1 || rows[0].Attempts != 0 || !strings.Contains(rows[0].Payload, "ChainLinkJob") {
		t.Fatalf("want exactly the next link queued, got %+v", rows)
	}
	if store.count("finish") != 3 {
		t.Fatalf("finish called %d times, want 2 failures and 1 success", store.count("finish"))
	}
}
