package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/faultproxy"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestDatabaseOutagesLoseNothing cuts the database away four times while
// a worker runs 400 jobs, each time while jobs are running: claims fail
// and are retried, outcomes decided while the database is away are
// written once it is back, and every job runs to completion.
func TestDatabaseOutagesLoseNothing(t *testing.T) {
	for _, engine := range []string{appconfig.EngineMySQL, appconfig.EnginePgSQL} {
		t.Run(engine, func(t *testing.T) {
			cfg := testdb.Config(t, engine)
			admin := testdb.Open(t, cfg) // creates (and later drops) the tables directly
			proxy := faultproxy.New(t, net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
			cfg.Host, cfg.Port = proxy.Addr()
			cfg.RetryAfter = 5
			q, err := database.Open(context.Background(), cfg, database.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()

			// The jobs run in five waves: a wave's handlers wait at its gate,
			// and the database is cut before the gate opens, so the outage
			// meets running jobs, their outcomes and the next claims.
			const n, waves = 400, 5
			gates := make([]*gate, waves)
			for i := range gates {
				gates[i] = newGate(t)
			}
			gates[0].open()
			var started atomic.Int64
			runs := newCounter()
			reg := handlers.NewRegistry()
			reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error {
				runs.add(job)
				gates[min(int(started.Add(1)-1)/(n/waves), waves-1)].wait()
				return nil
			})
			pushNumbered(t, admin, classA, n)
			opts := testConfig()
			opts.Concurrency = 8
			opts.LeaseEvery = time.Second
			opts.Metrics = NewMetrics(prometheus.NewRegistry())
			// A claim whose commit is cut may have reserved its rows: they
			// come back after retry_after with that attempt counted, as after
			// a crash. One spare try keeps such a job from failing.
			opts.Tries = 2
			w, logs := newTestWorker(t, q, reg, opts, nil)
			run := startWorker(w, 2*time.Minute)

			for i := 1; i < waves; i++ {
				testwait.Until(t, time.Minute, fmt.Sprintf("wave %d to wait at its gate", i), func() bool { return started.Load() > int64(i*n/waves) })
				before := databaseErrors(opts.Metrics)
				proxy.Cut()
				gates[i].open()
				testwait.Until(t, time.Minute, "the worker to meet the outage", func() bool { return databaseErrors(opts.Metrics) > before })
				proxy.Restore()
			}
			run.wait(t)
			// A claim whose commit was cut may have reserved rows nobody runs:
			// like a crashed worker's, they come back after retry_after.
			if left := jobRows(t, admin); len(left) != 0 {
				for _, r := range left {
					if !r.ReservedAt.Valid || r.Attempts != 1 {
						t.Fatalf("a job left after the outages is not an orphaned reservation: %+v", r)
					}
				}
				t.Logf("%s: %d reservations orphaned by cut commits; rerunning them retry_after later", engine, len(left))
				again := testConfig()
				again.Tries = opts.Tries
				w, _ = newTestWorker(t, afterRetryAfter(t, cfg), reg, again, nil)
				runWorker(t, w, time.Minute)
			}
			if left := jobRows(t, admin); len(left) != 0 {
				t.Fatalf("%d jobs left after the outages", len(left))
			}
			if f := failedRows(t, admin); len(f) != 0 {
				t.Fatalf("%d jobs failed: an outage must never fail a job; first: %s", len(f), f[0].Exception)
			}
			twice := 0
			for _, c := range runs.runs {
				if c > 1 {
					twice++
				}
			}
			if len(runs.runs) != n {
				t.Fatalf("%d distinct jobs ran, want %d", len(runs.runs), n)
			}
			t.Logf("%s: %d jobs, %d ran more than once (a claim whose commit was cut), log has %d database errors",
				engine, n, twice, countLines(logs.String(), "failed"))
			mustContain(t, "log", logs.String(), "retrying")
		})
	}
}

// databaseErrors counts the failed claims and writes the worker met.
func databaseErrors(m *Metrics) float64 {
	n := testutil.ToFloat64(m.claimErrors)
	for _, op := range []string{"delete", "finish", "release", "fail", "unreserve"} {
		n += testutil.ToFloat64(m.writeErrors.WithLabelValues(op))
	}
	return n
}

func countLines(s, sub string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			n++
		}
	}
	return n
}

// TestShutdownWithTheDatabaseDown: the database goes away while jobs run;
// their outcomes (grouped deletes and releases) cannot be written. After
// the stop signal the worker retries them for Grace + WriteGrace at most,
// then drops them, counts them, says so in its log and asks for exit
// status 75. The jobs stay reserved and come back after retry_after, as
// after a crash. When the database comes back within the write grace,
// everything is written and nothing is dropped.
func TestShutdownWithTheDatabaseDown(t *testing.T) {
	for _, engine := range []string{appconfig.EngineMySQL, appconfig.EnginePgSQL} {
		for _, comesBack := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/back within the write grace %v", engine, comesBack), func(t *testing.T) {
				cfg := testdb.Config(t, engine)
				admin := testdb.Open(t, cfg)
				proxy := faultproxy.New(t, net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
				cfg.Host, cfg.Port = proxy.Addr()
				cfg.RetryAfter = 3
				q, err := database.Open(context.Background(), cfg, database.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer q.Close()

				const n = 6
				pushNumbered(t, admin, classA, n)
				started := make(chan struct{}, n)
				proceed := newGate(t)
				reg := handlers.NewRegistry()
				reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error {
					started <- struct{}{}
					proceed.wait()
					var cmd struct {
						I int64 `php:"i"`
					}
					if err := job.Decode(&cmd); err != nil {
						return err
					}
					if cmd.I%2 == 0 {
						return nil // a grouped delete
					}
					job.Release(time.Minute) // a release, written by the job's goroutine
					return nil
				})
				opts := testConfig()
				opts.StopWhenEmpty = false
				opts.Concurrency = n
				opts.Grace = time.Second
				opts.WriteGrace = 2 * time.Second
				opts.Metrics = NewMetrics(prometheus.NewRegistry())
				w, logs := newTestWorker(t, q, reg, opts, nil)
				ctx, stop := context.WithCancel(context.Background())
				defer stop()
				done := make(chan StopReason, 1)
				go func() { done <- w.Run(ctx) }()
				for range n {
					testwait.Recv(t, started, 30*time.Second, "the jobs to start")
				}
				proxy.Cut()
				proceed.open()
				writeErrors := func(op string) float64 { return testutil.ToFloat64(opts.Metrics.writeErrors.WithLabelValues(op)) }
				testwait.Until(t, 30*time.Second, "every outcome's write to fail", func() bool {
					return writeErrors("release") >= n/2 && writeErrors("delete") >= 1
				})
				stopped := time.Now()
				failedBefore := databaseErrors(opts.Metrics)
				stop()
				if comesBack {
					// Back once the writes were retried after the stop signal:
					// well before the write deadline.
					testwait.Until(t, 30*time.Second, "a write retried after the stop", func() bool { return databaseErrors(opts.Metrics) > failedBefore })
					proxy.Restore()
				}
				reason := testwait.Recv(t, done, time.Minute, "the worker to stop")
				took := time.Since(stopped)
				st := w.Stats()
				if bound := opts.Grace + opts.WriteGrace + time.Second; took > bound {
					t.Errorf("the worker took %s to stop, more than Grace + WriteGrace (+1s): %s", took, bound)
				}
				if comesBack {
					if st.Dropped != 0 || st.Done != n/2 || st.Released != n/2 || ExitCode(reason, st) != ExitSuccess {
						t.Fatalf("database back in time: stats %+v, exit %d; want everything written", st, ExitCode(reason, st))
					}
					if rows := jobRows(t, admin); len(rows) != n/2 {
						t.Fatalf("%d rows, want the %d released copies", len(rows), n/2)
					}
					return
				}
				if st.Dropped != n || st.Done+st.Released+st.Lost != 0 || ExitCode(reason, st) != ExitOutcomesDropped {
					t.Fatalf("stats %+v, exit %d; want all %d outcomes dropped and exit %d", st, ExitCode(reason, st), n, ExitOutcomesDropped)
				}
				dropped := testutil.ToFloat64(opts.Metrics.dropped.WithLabelValues("delete")) + testutil.ToFloat64(opts.Metrics.dropped.WithLabelValues("release"))
				if dropped != n {
					t.Errorf("laraworker_outcomes_dropped_total = %v, want %d", dropped, n)
				}
				mustContain(t, "log", logs.String(), `"dropped":6`, "come back after retry_after")
				// As after a crash: the rows are still reserved, and run again
				// once retry_after has passed.
				proxy.Restore()
				rows := jobRows(t, admin)
				if len(rows) != n {
					t.Fatalf("%d rows after the dropped outcomes, want the %d jobs still reserved", len(rows), n)
				}
				reg2 := handlers.NewRegistry()
				reg2.HandleFunc(classA, func(context.Context, *handlers.Job) error { return nil })
				again := testConfig()
				again.Tries = 2 // the dropped run counted an attempt, as a crashed one does
				w2, logs2 := newTestWorker(t, afterRetryAfter(t, cfg), reg2, again, nil)
				runWorker(t, w2, time.Minute)
				if rows := jobRows(t, admin); len(rows) != 0 || w2.Stats().Done != n {
					t.Fatalf("after retry_after: %d rows left, stats %+v\n%s", len(rows), w2.Stats(), logs2)
				}
			})
		}
	}
}

// TestSelfStopWithTheDatabaseDown: a worker that stops by itself (here
// --max-jobs) while the database is down gives the failing writes
// WriteGrace after its last handler returned, then drops them: it never
// hangs on a dead database.
func TestSelfStopWithTheDatabaseDown(t *testing.T) {
	cfg := testdb.Config(t, appconfig.EngineMySQL)
	admin := testdb.Open(t, cfg)
	proxy := faultproxy.New(t, net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	cfg.Host, cfg.Port = proxy.Addr()
	q, err := database.Open(context.Background(), cfg, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	const n = 4
	pushNumbered(t, admin, classA, n)
	started := make(chan struct{}, n)
	proceed := newGate(t)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error {
		started <- struct{}{}
		proceed.wait()
		return errors.New("try again") // tries 3: a release
	})
	opts := testConfig()
	opts.StopWhenEmpty = false
	opts.MaxJobs = n
	opts.Concurrency = n
	opts.Tries = 3
	opts.WriteGrace = 2 * time.Second
	w, _ := newTestWorker(t, q, reg, opts, nil)
	run := startWorker(w, time.Minute)
	for range n {
		testwait.Recv(t, started, 30*time.Second, "the jobs to start")
	}
	proxy.Cut()
	returned := time.Now()
	proceed.open()
	reason := run.wait(t)
	took := time.Since(returned)
	st := w.Stats()
	if reason != StopMaxJobs || st.Dropped != n || ExitCode(reason, st) != ExitOutcomesDropped {
		t.Fatalf("reason %s, stats %+v, exit %d; want max_jobs, %d dropped, exit %d", reason, st, ExitCode(reason, st), n, ExitOutcomesDropped)
	}
	if bound := opts.WriteGrace + time.Second; took > bound {
		t.Errorf("stopped %s after the handlers returned, more than WriteGrace (+1s): %s", took, bound)
	}
}
