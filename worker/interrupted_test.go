package worker

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// blockingHandler runs until its context ends (or, stubborn, until the
// test ends) and tells started when it begins.
func blockingHandler(started chan<- string, stubborn <-chan struct{}) handlers.HandlerFunc {
	return func(ctx context.Context, job *handlers.Job) error {
		started <- job.UUID
		if stubborn != nil {
			<-stubborn // ignores the cancellation
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}
}

// interruptOnce runs a worker until its handler started, sends the stop
// signal and waits for Run to return; it returns the worker's stats.
func interruptOnce(t *testing.T, w *Worker, started <-chan string) jobqueue.WorkerStats {
	t.Helper()
	run := startWorker(w, time.Minute)
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not start")
	}
	run.stop()
	if reason := run.wait(t); reason != StopInterrupted {
		t.Fatalf("stopped for %s", reason)
	}
	return w.Stats()
}

// shutdownConfig is a worker that waits for jobs and gives them 50 ms
// after the stop signal.
func shutdownConfig() Config {
	c := testConfig()
	c.StopWhenEmpty = false
	c.Grace = 50 * time.Millisecond
	return c
}

// TestShutdownRestoresTheAttemptWithinABound: a job that outlives --grace
// (with --tries=1) is given back as it was before the claim (same id,
// queue and payload, attempts 0) for its first 3 interruptions in a row,
// counted in the app's cache; at the 4th its attempt counts, as Laravel's
// would, and the log names the --timeout/--grace mismatch. Then the next
// worker fails it with MaxAttemptsExceeded, as PHP would. The counter
// exists at 0 before the first interruption.
func TestShutdownRestoresTheAttemptWithinABound(t *testing.T) {
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			q := testdb.Open(t, testdb.WithCache(t, testdb.Config(t, engine)))
			testdb.CreateCacheTable(t, q)
			started := make(chan string, 1)
			reg := handlers.NewRegistry()
			reg.Handle(classA, blockingHandler(started, nil))
			uuid := push(t, q, "deploys", classA, phpserialize.Public("timeout", phpserialize.Int(600)))
			before := jobRows(t, q)
			metrics := NewMetrics(prometheus.NewRegistry())
			series := metrics.interrupted.WithLabelValues("deploys", classA, "restored")
			cfg := shutdownConfig()
			cfg.Queues, cfg.Metrics = []string{"deploys"}, metrics

			newTestWorker(t, q, reg, cfg, nil) // registers the worker's series
			if got := testutil.ToFloat64(series); got != 0 || testutil.CollectAndCount(metrics.interrupted) != 4 {
				t.Fatalf("before any interruption: restored %v, %d series; want every series at 0", got, testutil.CollectAndCount(metrics.interrupted))
			}
			for i := 1; i <= maxRestoredInterruptions; i++ {
				w, logs := newTestWorker(t, q, reg, cfg, nil)
				st := interruptOnce(t, w, started)
				rows := jobRows(t, q)
				if len(rows) != 1 || rows[0].ID != before[0].ID || rows[0].Queue != "deploys" || rows[0].Payload != before[0].Payload ||
					rows[0].Attempts != 0 || rows[0].ReservedAt.Valid {
					t.Fatalf("interruption %d: want the row as before the claim (%+v), got %+v", i, before, rows)
				}
				if st.Interrupted != 1 || st.Released != 1 || st.Returned != 0 {
					t.Errorf("interruption %d: stats %+v", i, st)
				}
				line := lineWith(logs.String(), "cut short by shutdown")
				mustContain(t, "log", line, `"uuid":"`+uuid+`"`, `"class":"App\\Jobs\\SendMail"`, "its attempt is restored", `"interruption":`+strconv.Itoa(i))
			}
			if got := testutil.ToFloat64(series); got != maxRestoredInterruptions {
				t.Errorf("laraworker_jobs_interrupted_total{attempt=restored} = %v, want %d", got, maxRestoredInterruptions)
			}

			w, logs := newTestWorker(t, q, reg, cfg, nil)
			st := interruptOnce(t, w, started)
			rows := jobRows(t, q)
			if len(rows) != 1 || rows[0].Attempts != 1 || rows[0].ReservedAt.Valid || st.Released != 1 || st.Interrupted != 1 {
				t.Fatalf("4th interruption: want the job released with its attempt counted, got %+v, stats %+v", rows, st)
			}
			mustContain(t, "log", lineWith(logs.String(), "cut short by shutdown"),
				"for the 4th time in a row; its attempt counts, as Laravel's would", "its timeout (10m0s) is longer than --grace (50ms)")
			if got := testutil.ToFloat64(metrics.interrupted.WithLabelValues("deploys", classA, "counted")); got != 1 {
				t.Errorf("laraworker_jobs_interrupted_total{attempt=counted} = %v, want 1", got)
			}

			// The attempt counted: with --tries=1 the next worker fails it,
			// as `php artisan queue:work` would.
			cfg.StopWhenEmpty = true
			w, _ = newTestWorker(t, q, reg, cfg, nil)
			runWorker(t, w, 30*time.Second)
			if f := failedRows(t, q); len(f) != 1 || f[0].UUID != uuid || !strings.Contains(f[0].Exception, "MaxAttemptsExceededException") {
				t.Fatalf("failed jobs %+v", f)
			}
		})
	}
}

func lineWith(s, part string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, part) {
			return l
		}
	}
	return ""
}

// TestShutdownWithoutCacheAlwaysRestores: without a shared cache the
// interruptions cannot be counted across workers; every one restores the
// attempt and the log says the bound is off.
func TestShutdownWithoutCacheAlwaysRestores(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	started := make(chan string, 1)
	reg := handlers.NewRegistry()
	reg.Handle(classA, blockingHandler(started, nil))
	push(t, q, "", classA)
	for i := 0; i <= maxRestoredInterruptions; i++ {
		w, logs := newTestWorker(t, q, reg, shutdownConfig(), nil)
		interruptOnce(t, w, started)
		if rows := jobRows(t, q); len(rows) != 1 || rows[0].Attempts != 0 || rows[0].ReservedAt.Valid {
			t.Fatalf("interruption %d: %+v", i+1, rows)
		}
		mustContain(t, "log", lineWith(logs.String(), "cut short by shutdown"), "its attempt is restored", "no shared cache")
	}
}

// TestShutdownRestoresAbandonedJobs: a handler that ignores the
// cancellation is abandoned; its job goes back with its attempt restored,
// counted like any interruption.
func TestShutdownRestoresAbandonedJobs(t *testing.T) {
	q := testdb.Open(t, testdb.WithCache(t, testdb.Config(t, appconfig.EngineSQLite)))
	testdb.CreateCacheTable(t, q)
	started := make(chan string, 1)
	stubborn := make(chan struct{})
	defer close(stubborn)
	reg := handlers.NewRegistry()
	reg.Handle(classA, blockingHandler(started, stubborn))
	uuid := push(t, q, "", classA)
	w, logs := newTestWorker(t, q, reg, shutdownConfig(), nil)
	st := interruptOnce(t, w, started)
	if rows := jobRows(t, q); len(rows) != 1 || rows[0].Attempts != 0 || rows[0].ReservedAt.Valid || st.Interrupted != 1 {
		t.Fatalf("rows %+v, stats %+v", rows, st)
	}
	mustContain(t, "log", lineWith(logs.String(), "cut short by shutdown"), "its attempt is restored", `"handler_abandoned":true`, `"interruption":1`)
	if v, ok, err := q.Cache().Get(context.Background(), interruptionsKey(uuid)); err != nil || !ok || string(v) != "i:1;" {
		t.Errorf("interruption count in the cache: %q %v %v", v, ok, err)
	}
}
