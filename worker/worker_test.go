package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const (
	classA = `App\Jobs\SendMail`
	classB = `App\Jobs\PhpOnly`
)

func TestRunsRoutedJobsAndLeavesOthersUntouched(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		runs := newCounter()
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error { runs.add(job); return nil })
		var ids []string
		for i := 0; i < 5; i++ {
			ids = append(ids, push(t, q, "", classA, phpserialize.Public("n", phpserialize.Int(int64(i)))))
		}
		push(t, q, "", classB)
		w, _ := newTestWorker(t, q, reg, testConfig(), nil)
		if reason := runWorker(t, w, 30*time.Second); reason != StopEmpty {
			t.Fatalf("stopped for %s", reason)
		}
		for _, id := range ids {
			if runs.count(id) != 1 {
				t.Errorf("job %s ran %d times", id, runs.count(id))
			}
		}
		rows := jobRows(t, q)
		if len(rows) != 1 || !strings.Contains(rows[0].Payload, `PhpOnly`) {
			t.Fatalf("want only the PHP job left, got %+v", rows)
		}
		if rows[0].Attempts != 0 || rows[0].ReservedAt.Valid {
			t.Fatalf("the job without a Go handler was touched: attempts %d reserved_at %v", rows[0].Attempts, rows[0].ReservedAt)
		}
	})
}

func TestTriesAndBackoffAcrossAttempts(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return errors.New("smtp is down") })
		uuid := push(t, q, "mail", classA, phpserialize.Public("tries", phpserialize.Int(3)), phpserialize.Public("backoff", phpserialize.List(phpserialize.Int(5), phpserialize.Int(60))))
		opts := testConfig()
		opts.Queues = []string{"mail"}
		for attempt, wantDelay := range []int64{5, 60} {
			w, _ := newTestWorker(t, q, reg, opts, nil)
			before := time.Now().Unix()
			runWorker(t, w, 30*time.Second)
			rows := jobRows(t, q)
			if len(rows) != 1 {
				t.Fatalf("attempt %d: want the job released, rows %+v", attempt+1, rows)
			}
			r := rows[0]
			if r.Attempts != int64(attempt+1) || r.ReservedAt.Valid || r.Queue != "mail" {
				t.Fatalf("attempt %d: row %+v", attempt+1, r)
			}
			within(t, "available_at - now", r.AvailableAt-before, wantDelay, 1)
			if len(failedRows(t, q)) != 0 {
				t.Fatal("failed too early")
			}
			makeReady(t, q)
		}
		w, _ := newTestWorker(t, q, reg, opts, nil)
		runWorker(t, w, 30*time.Second)
		if rows := jobRows(t, q); len(rows) != 0 {
			t.Fatalf("after the third attempt the job must be gone, got %+v", rows)
		}
		failed := failedRows(t, q)
		if len(failed) != 1 {
			t.Fatalf("want one failed job, got %d", len(failed))
		}
		f := failed[0]
		if f.UUID != uuid || f.Connection != "database" || f.Queue != "mail" {
			t.Errorf("failed row %+v", f)
		}
		mustContain(t, "exception", f.Exception, "smtp is down in ", "\nStack trace:\n#0 ", "worker_test.go", "\n#1 {main}")
		if !strings.HasPrefix(f.Exception, `LaraWorker\GoException: smtp is down in `) {
			t.Errorf("exception does not read like PHP's: %q", f.Exception)
		}
	})
}

func TestAlreadyExceededFailsWithoutRunning(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		var ran atomic.Int32
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { ran.Add(1); return nil })
		uuid := push(t, q, "", classA)
		// A previous worker died mid-run: attempts already 1, reservation
		// expired. With --tries=1 the next reservation makes it 2 > 1.
		exec(t, q, fmt.Sprintf("update %s set attempts = 1, reserved_at = ?", q.Config().JobsTable), time.Now().Unix()-1000)
		w, _ := newTestWorker(t, q, reg, testConfig(), nil)
		runWorker(t, w, 30*time.Second)
		if ran.Load() != 0 {
			t.Fatal("the handler ran")
		}
		failed := failedRows(t, q)
		if len(failed) != 1 || failed[0].UUID != uuid {
			t.Fatalf("failed rows %+v", failed)
		}
		want := `Illuminate\Queue\MaxAttemptsExceededException: App\Jobs\SendMail has been attempted too many times. in `
		if !strings.HasPrefix(failed[0].Exception, want) {
			t.Errorf("exception %q, want prefix %q", failed[0].Exception, want)
		}
	})
}

func TestRetryUntilReplacesTries(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		reg := handlers.NewRegistry()
		var ran atomic.Int32
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { ran.Add(1); return errors.New("later") })
		future := time.Now().Add(time.Hour).Unix()
		push(t, q, "", classA, phpserialize.Public("retryUntil", phpserialize.Int(future)))
		past := push(t, q, "", classA, phpserialize.Public("retryUntil", phpserialize.Int(time.Now().Add(-time.Minute).Unix())))
		opts := testConfig()
		opts.Backoff = "30"
		w, _ := newTestWorker(t, q, reg, opts, nil) // --tries=1 would fail it, retryUntil wins
		runWorker(t, w, 30*time.Second)
		rows := jobRows(t, q)
		if len(rows) != 1 || rows[0].Attempts != 1 {
			t.Fatalf("the job with a future retryUntil must be released, got %+v", rows)
		}
		failed := failedRows(t, q)
		if len(failed) != 1 || failed[0].UUID != past || !strings.Contains(failed[0].Exception, "MaxAttemptsExceededException") {
			t.Fatalf("the expired job must fail before running: %+v", failed)
		}
		if ran.Load() != 1 {
			t.Fatalf("handler ran %d times, want 1", ran.Load())
		}
	})
}

func TestTimeouts(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(ctx context.Context, _ *handlers.Job) error {
			<-ctx.Done()
			return ctx.Err()
		})
		ignoring := newGate(t) // open when the test ends
		reg.HandleFunc(classB, func(context.Context, *handlers.Job) error {
			ignoring.wait() // ignores its context
			return nil
		})
		lastTry := push(t, q, "", classA, phpserialize.Public("timeout", phpserialize.Int(1)))
		retried := push(t, q, "", classA, phpserialize.Public("timeout", phpserialize.Int(1)), phpserialize.Public("tries", phpserialize.Int(3)))
		failOnTimeout := push(t, q, "", classA, phpserialize.Public("timeout", phpserialize.Int(1)), phpserialize.Public("tries", phpserialize.Int(3)), phpserialize.Public("failOnTimeout", phpserialize.Bool(true)))
		stubborn := push(t, q, "", classB, phpserialize.Public("timeout", phpserialize.Int(1)))
		opts := testConfig()
		opts.Backoff = "30"
		w, logs := newTestWorker(t, q, reg, opts, nil)
		runWorker(t, w, 30*time.Second)
		failed := map[string]string{}
		for _, f := range failedRows(t, q) {
			failed[f.UUID] = f.Exception
		}
		for _, id := range []string{lastTry, failOnTimeout, stubborn} {
			if !strings.HasPrefix(failed[id], `Illuminate\Queue\TimeoutExceededException: `) || !strings.Contains(failed[id], " has timed out. in ") {
				t.Errorf("job %s: exception %q", id, failed[id])
			}
		}
		rows := jobRows(t, q)
		if len(rows) != 1 || !strings.Contains(rows[0].Payload, retried) || rows[0].Attempts != 1 || rows[0].ReservedAt.Valid {
			t.Fatalf("the job with tries left must be released: %+v", rows)
		}
		mustContain(t, "log", logs.String(), "abandoned")
	})
}

func TestPanicsBecomeFailuresWithAStack(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error {
			var m map[string]int
			//lint:ignore SA5000 the panic is the point of this handler
			m["boom"] = 1
			return nil
		})
		push(t, q, "", classA)
		other := push(t, q, "", classA+"2")
		runs := newCounter()
		reg.HandleFunc(classA+"2", func(_ context.Context, job *handlers.Job) error { runs.add(job); return nil })
		w, _ := newTestWorker(t, q, reg, testConfig(), nil)
		runWorker(t, w, 30*time.Second)
		failed := failedRows(t, q)
		if len(failed) != 1 {
			t.Fatalf("want the panicking job failed, got %d", len(failed))
		}
		mustContain(t, "exception", failed[0].Exception, "panic: assignment to entry in nil map", "Stack trace:\n#0 ", "worker_test.go", "{main}")
		if len(jobRows(t, q)) != 0 || runs.count(other) != 1 {
			t.Fatal("the worker must go on with other jobs after a panic")
		}
	})
}

func TestHandlerDecisions(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error {
			var cmd struct {
				Action string `php:"action"`
			}
			if err := job.Decode(&cmd); err != nil {
				return err
			}
			switch cmd.Action {
			case "release":
				job.Release(120 * time.Second)
			case "fail":
				job.Fail(errors.New("card declined"))
			case "manual":
				job.Fail(nil)
			case "delete":
				job.Delete()
				return errors.New("ignored after delete")
			}
			return nil
		})
		act := func(a string) string {
			return push(t, q, "", classA, phpserialize.Public("action", phpserialize.String(a)), phpserialize.Public("tries", phpserialize.Int(5)))
		}
		released, failedNow, manual := act("release"), act("fail"), act("manual")
		act("delete")
		w, _ := newTestWorker(t, q, reg, testConfig(), nil)
		before := time.Now().Unix()
		runWorker(t, w, 30*time.Second)
		after := time.Now().Unix()
		rows := jobRows(t, q)
		if len(rows) != 1 || !strings.Contains(rows[0].Payload, released) || rows[0].Attempts != 1 {
			t.Fatalf("want only the released job left, got %+v", rows)
		}
		if at := rows[0].AvailableAt; at < before+120 || at > after+120 {
			t.Errorf("released to %d, want 120 s after the run (%d..%d)", at, before+120, after+120)
		}
		failed := map[string]string{}
		for _, f := range failedRows(t, q) {
			failed[f.UUID] = f.Exception
		}
		if !strings.HasPrefix(failed[failedNow], `LaraWorker\GoException: card declined in `) {
			t.Errorf("Fail(err) with tries left must fail now: %q", failed[failedNow])
		}
		if !strings.HasPrefix(failed[manual], `Illuminate\Queue\ManuallyFailedException in `) {
			t.Errorf("Fail(nil) must read as ManuallyFailedException: %q", failed[manual])
		}
		if len(failed) != 2 {
			t.Errorf("failed: %v", failed)
		}
	})
}

func TestMaxExceptions(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return errors.New("flaky") })
		uuid := push(t, q, "", classA, phpserialize.Public("tries", phpserialize.Int(10)), phpserialize.Public("maxExceptions", phpserialize.Int(2)))
		w, _ := newTestWorker(t, q, reg, testConfig(), nil)
		// Both runs in one worker (backoff 0 makes the released job ready at
		// once); the counter is per uuid, as Laravel's cache key is.
		runWorker(t, w, 30*time.Second)
		failed := failedRows(t, q)
		if len(failed) != 1 || failed[0].UUID != uuid {
			t.Fatalf("want failed after 2 exceptions, got %+v rows %+v", failed, jobRows(t, q))
		}
		if w.Claimed() != 2 {
			t.Fatalf("ran %d times, want 2", w.Claimed())
		}
	})
}

func TestUndecodableJobsFailWithTheReason(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return nil })
		opts := testConfig()
		opts.Unrouted = UnroutedFail
		pushRaw(t, q, "", []byte(`{"uuid":"00000000-0000-4000-8000-00000000bad1","displayName":"App\\Jobs\\SendMail","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\SendMail","command":"O:17:\"App\\Jobs\\SendMail\":1:{s:1:\"a\";i:"}}`))
		pushRaw(t, q, "", []byte(`this is not json`))
		pushRaw(t, q, "", []byte(`{"uuid":"00000000-0000-4000-8000-00000000bad4","displayName":"App\\Jobs\\Nobody","job":"x","data":""}`))
		w, _ := newTestWorker(t, q, reg, opts, nil)
		runWorker(t, w, 30*time.Second)
		if rows := jobRows(t, q); len(rows) != 0 {
			t.Fatalf("every bad job must end in failed_jobs, left: %+v", rows)
		}
		byUUID := map[string]string{}
		var notJSON string
		for _, f := range failedRows(t, q) {
			if f.Payload == "this is not json" {
				notJSON = f.Exception
				if len(f.UUID) != 36 {
					t.Errorf("a payload without uuid gets a fresh one, got %q", f.UUID)
				}
				continue
			}
			byUUID[f.UUID] = f.Exception
		}
		mustContain(t, "truncated command", byUUID["00000000-0000-4000-8000-00000000bad1"], "cannot decode the command of App\\Jobs\\SendMail", "at byte")
		mustContain(t, "not JSON", notJSON, `Illuminate\Queue\InvalidPayloadException: Unable to decode the job payload: payload: invalid JSON`)
		mustContain(t, "unrouted", byUUID["00000000-0000-4000-8000-00000000bad4"], `LaraWorker\NoHandlerException`, `[App\Jobs\Nobody]`)
	})
}

func TestConcurrentWorkersRunEachJobOnce(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		runs := newCounter()
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error {
			runs.add(job)
			return nil
		})
		const n = 300
		pushNumbered(t, q, classA, n)
		var workers []*workerRun
		for i := 0; i < 3; i++ {
			opts := testConfig()
			opts.Concurrency = 16
			opts.LaravelExact = i == 2
			w, _ := newTestWorker(t, q, reg, opts, nil)
			workers = append(workers, startWorker(w, time.Minute))
		}
		for _, r := range workers {
			r.wait(t)
		}
		if runs.total() != n || len(runs.runs) != n {
			t.Fatalf("%d runs of %d distinct jobs, want %d each once", runs.total(), len(runs.runs), n)
		}
		if rows := jobRows(t, q); len(rows) != 0 {
			t.Fatalf("%d jobs left", len(rows))
		}
	})
}

// TestLeaseExtensionKeepsALongJobFromBeingTakenTwice: a job runs for more
// than twice retry_after while a second worker (Laravel's exact claim)
// tries to take it after every lease tick: with leases it never gets it.
// The worker and both stores run on one fake clock.
func TestLeaseExtensionKeepsALongJobFromBeingTakenTwice(t *testing.T) {
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dbcfg := testdb.Config(t, engine)
			dbcfg.RetryAfter = 3
			q := testdb.Open(t, dbcfg)
			opts := testConfig()
			fake := withFakeClock(&opts)
			wq := openAt(t, dbcfg, fake.Now)
			reg := handlers.NewRegistry()
			started := make(chan struct{}, 1)
			done := newGate(t)
			reg.HandleFunc(classA, func(context.Context, *handlers.Job) error {
				started <- struct{}{}
				done.wait()
				return nil
			})
			push(t, wq, "", classA, phpserialize.Public("timeout", phpserialize.Int(0)))
			opts.LeaseEvery = time.Second
			opts.Metrics = NewMetrics(prometheus.NewRegistry())
			w, _ := newTestWorker(t, wq, reg, opts, nil)
			run := startWorker(w, time.Minute)
			testwait.Recv(t, started, 30*time.Second, "the job to start")
			for second := 1; second <= 7; second++ { // > 2 x retry_after
				fake.Advance(time.Second)
				testwait.Until(t, 30*time.Second, "the lease tick's refresh", func() bool {
					return testutil.ToFloat64(opts.Metrics.leases) == float64(second)
				})
				jobs, err := wq.Claim(context.Background(), nil, 1, jobqueue.ClaimOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(jobs) != 0 {
					t.Fatalf("a running job was claimed again %d s after its claim (retry_after %d s, attempts %d)", second, dbcfg.RetryAfter, jobs[0].Attempts)
				}
			}
			done.open()
			run.wait(t)
			if rows := jobRows(t, q); len(rows) != 0 {
				t.Fatalf("job not deleted: %+v", rows)
			}
		})
	}
}

func TestStopSignalReleasesJobsThatOutliveTheGrace(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		reg := handlers.NewRegistry()
		started := make(chan struct{}, 1)
		reg.HandleFunc(classA, func(ctx context.Context, _ *handlers.Job) error {
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		})
		push(t, q, "", classA, phpserialize.Public("tries", phpserialize.Int(1)))
		opts := testConfig()
		opts.StopWhenEmpty = false
		opts.Grace = 200 * time.Millisecond
		w, _ := newTestWorker(t, q, reg, opts, nil)
		run := startWorker(w, time.Minute)
		testwait.Recv(t, started, 30*time.Second, "the job to start")
		run.stop()
		if reason := run.wait(t); reason != StopInterrupted {
			t.Fatalf("reason %s", reason)
		}
		// Back as before the claim: with tries 1, a counted attempt would
		// make the next worker fail it.
		rows := jobRows(t, q)
		if len(rows) != 1 || rows[0].ReservedAt.Valid || rows[0].Attempts != 0 {
			t.Fatalf("the interrupted job must be back on the queue with its attempt restored, not failed: %+v", rows)
		}
		if len(failedRows(t, q)) != 0 {
			t.Fatal("an interrupted job must not fail")
		}
	})
}

func TestStopConditions(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return nil })
		for i := 0; i < 5; i++ {
			push(t, q, "", classA)
		}
		opts := testConfig()
		opts.StopWhenEmpty = false
		opts.Once = true
		w, _ := newTestWorker(t, q, reg, opts, nil)
		if reason := runWorker(t, w, 30*time.Second); reason != StopOnce || len(jobRows(t, q)) != 4 {
			t.Fatalf("--once: %s, %d left", reason, len(jobRows(t, q)))
		}
		opts.Once = false
		opts.MaxJobs = 3
		w, _ = newTestWorker(t, q, reg, opts, nil)
		if reason := runWorker(t, w, 30*time.Second); reason != StopMaxJobs || len(jobRows(t, q)) != 1 {
			t.Fatalf("--max-jobs=3: %s, %d left", reason, len(jobRows(t, q)))
		}
		opts.MaxJobs = 0
		opts.MaxTime = 300 * time.Millisecond
		w, _ = newTestWorker(t, q, reg, opts, nil)
		if reason := runWorker(t, w, 30*time.Second); reason != StopMaxTime {
			t.Fatalf("--max-time: %s", reason)
		}
		opts.MaxTime = 0
		opts.MemoryMB = 1
		w, _ = newTestWorker(t, q, reg, opts, nil)
		if reason := runWorker(t, w, 30*time.Second); reason != StopMemory || reason.ExitCode() != 12 {
			t.Fatalf("--memory=1: %s", reason)
		}
	})
}

func TestQueuePriority(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		runs := newCounter()
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error {
			runs.mu.Lock()
			runs.seq = append(runs.seq, job.Queue)
			runs.mu.Unlock()
			return nil
		})
		push(t, q, "low", classA)
		push(t, q, "high", classA)
		push(t, q, "low", classA)
		push(t, q, "high", classA)
		opts := testConfig()
		opts.Queues = []string{"high", "low"}
		opts.Concurrency = 1
		w, _ := newTestWorker(t, q, reg, opts, nil)
		runWorker(t, w, 30*time.Second)
		if got := strings.Join(runs.seq, ","); got != "high,high,low,low" {
			t.Fatalf("order %s, want high,high,low,low", got)
		}
	})
}

func TestFailureTextPointsAtTheUsersHandler(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	reg := handlers.NewRegistry()
	reg.Use(handlers.Recover()) // middleware must not hide where the handler is
	type cmd struct {
		N int64 `php:"n"`
	}
	handlers.Register(reg, classA, func(context.Context, *handlers.Job, *cmd) error { return errors.New("typed handler failed") })
	push(t, q, "", classA, phpserialize.Public("n", phpserialize.Int(1)))
	w, _ := newTestWorker(t, q, reg, testConfig(), nil)
	runWorker(t, w, 30*time.Second)
	failed := failedRows(t, q)
	if len(failed) != 1 {
		t.Fatalf("failed %d", len(failed))
	}
	mustContain(t, "exception", failed[0].Exception, "typed handler failed in ", "worker_test.go:", "TestFailureTextPointsAtTheUsersHandler")
}

// TestMaxExceptionsAreSharedWithPHP: PHP counted one exception in the
// app's cache; Go's next exception reaches maxExceptions (2) and fails the
// job, though tries (10) are left. The counter is gone afterwards, as
// Laravel forgets it.
func TestMaxExceptionsAreSharedWithPHP(t *testing.T) {
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			q := testdb.Open(t, testdb.WithCache(t, testdb.Config(t, engine)))
			testdb.CreateCacheTable(t, q)
			reg := handlers.NewRegistry()
			reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return errors.New("flaky again") })
			uuid := push(t, q, "", classA, phpserialize.Public("tries", phpserialize.Int(10)), phpserialize.Public("maxExceptions", phpserialize.Int(2)))
			cache := q.Cache()
			if err := cache.Put(context.Background(), "job-exceptions:"+uuid, []byte("i:1;"), 24*time.Hour); err != nil {
				t.Fatal(err)
			}
			opts := testConfig()
			opts.Backoff = "60"
			w, _ := newTestWorker(t, q, reg, opts, nil)
			runWorker(t, w, 30*time.Second)
			if f := failedRows(t, q); len(f) != 1 || f[0].UUID != uuid || w.Claimed() != 1 {
				t.Fatalf("want the job failed on its first Go exception: failed %+v, runs %d", f, w.Claimed())
			}
			if _, ok, _ := cache.Get(context.Background(), "job-exceptions:"+uuid); ok {
				t.Fatal("the counter must be forgotten once the job fails")
			}
		})
	}
}

// TestQueueRestartStopsGoWorkers: `php artisan queue:restart` writes a new
// timestamp to the cache; Go workers stop as PHP ones do.
func TestQueueRestartStopsGoWorkers(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	q := testdb.Open(t, testdb.WithCache(t, testdb.Config(t, appconfig.EngineSQLite)))
	testdb.CreateCacheTable(t, q)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return nil })
	if err := q.Cache().Put(context.Background(), "illuminate:queue:restart", []byte("i:1700000000;"), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	opts := testConfig()
	opts.StopWhenEmpty = false
	opts.Cache = q.Cache()
	store := &deleteRecorder{Store: q}
	w, _ := newTestWorker(t, store, reg, opts, nil)
	run := startWorker(w, 10*time.Second)
	// A few claims went by (the stamp is read at most every
	// restartEvery, the first time at once).
	testwait.Until(t, 10*time.Second, "a few claims", func() bool { return store.claims.Load() >= 3 })
	if r, stopped := run.stopped(); stopped {
		t.Fatalf("stopped early: %s", r)
	}
	if err := q.Cache().Put(context.Background(), "illuminate:queue:restart", []byte("i:1700000100;"), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if r := run.wait(t); r != StopRestart || r.ExitCode() != 0 {
		t.Fatalf("reason %s", r)
	}
}

// restartReads counts the reads of the queue:restart stamp.
type restartReads struct {
	jobqueue.Cache
	n atomic.Int64
}

func (c *restartReads) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if key == restartKey {
		c.n.Add(1)
	}
	return c.Cache.Get(ctx, key)
}

// TestRestartStampIsReadOncePerSleepWhileIdle: an idle worker polling many
// times a second reads the queue:restart stamp once per --sleep, as PHP's
// idle loop does, not after each claim (a round trip each); it does read
// it, so a restart still stops it.
func TestRestartStampIsReadOncePerSleepWhileIdle(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	q := testdb.Open(t, testdb.WithCache(t, testdb.Config(t, appconfig.EngineSQLite)))
	testdb.CreateCacheTable(t, q)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return nil })
	cache := &restartReads{Cache: q.Cache()}
	opts := testConfig()
	opts.StopWhenEmpty = false
	opts.Sleep = 1500 * time.Millisecond
	opts.IdlePoll = 10 * time.Millisecond // polls every 10 ms at most
	opts.Cache = cache
	store := &deleteRecorder{Store: q}
	w, _ := newTestWorker(t, store, reg, opts, nil)
	began := time.Now()
	run := startWorker(w, 20*time.Second)
	testwait.Until(t, 10*time.Second, "100 idle claims", func() bool { return store.claims.Load() >= 100 })
	reads, elapsed := cache.n.Load(), time.Since(began)
	// One read at start, then one per --sleep.
	if most := 1 + int64(elapsed/opts.Sleep); reads > most || reads < 1 {
		t.Fatalf("%d reads of the stamp over %d idle claims in %s, want 1 to %d (at start, then once per --sleep)", reads, store.claims.Load(), elapsed.Round(time.Millisecond), most)
	}
	if err := q.Cache().Put(context.Background(), restartKey, []byte("i:1700000100;"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if r := run.wait(t); r != StopRestart {
		t.Fatalf("reason %s", r)
	}
}

// TestLaravel8ExceptionTexts: with --laravel-version 8.83 the failures read
// exactly as the real Laravel 8.83 worker wrote them (fixtures
// failed-max-attempts and failed-timeout).
func TestLaravel8ExceptionTexts(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\NoopJob`, func(context.Context, *handlers.Job) error { return nil })
	reg.HandleFunc(`App\Jobs\SleepJob`, func(ctx context.Context, _ *handlers.Job) error { <-ctx.Done(); return ctx.Err() })
	noop := fixture(t, "noop.json")
	id := pushRaw(t, q, "", noop)
	exec(t, q, fmt.Sprintf("update %s set attempts = 1 where id = ?", q.Config().JobsTable), id)
	sleep := fixture(t, "sleep.json")
	pushRaw(t, q, "", sleep)
	opts := testConfig()
	opts.LaravelVersion = "8.83.26"
	w, _ := newTestWorker(t, q, reg, opts, nil)
	runWorker(t, w, 30*time.Second)
	firstLine := func(s string) string { return strings.SplitN(s, " in ", 2)[0] }
	want := map[string]string{}
	for _, name := range []string{"failed-max-attempts.exception.txt", "failed-timeout.exception.txt"} {
		text := string(fixture(t, name))
		want[firstLine(text)] = name
	}
	failed := failedRows(t, q)
	if len(failed) != 2 {
		t.Fatalf("failed %d", len(failed))
	}
	for _, f := range failed {
		if _, ok := want[firstLine(f.Exception)]; !ok {
			t.Errorf("%q is not what Laravel 8.83 wrote (%v)", firstLine(f.Exception), want)
		}
	}
}
