package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/cache/rediscache"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/worker"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// The worker runs on the store as on the database queue: these tests
// build it with worker.New, as the CLI does, and check what a user of
// the app would check (Redis's keys, failed_jobs, job_batches).

func workerConfig() worker.Config {
	return worker.Config{
		Sleep:         10 * time.Millisecond,
		StopWhenEmpty: true,
		Grace:         2 * time.Second,
		Abandon:       300 * time.Millisecond,
		MemoryMB:      -1,
	}
}

func (e *env) worker(t *testing.T, reg *handlers.Registry, cfg worker.Config) *worker.Worker {
	t.Helper()
	cfg.Logger = zerolog.New(e.logs)
	w, err := worker.New(e.s, reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// run runs w until it stops by itself, or fails the test after limit.
func run(t *testing.T, w *worker.Worker, limit time.Duration) worker.StopReason {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	reason := w.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("the worker did not stop by itself within %s", limit)
	}
	return reason
}

// runs counts handler runs per job uuid.
type runs struct {
	mu sync.Mutex
	m  map[string]int
}

func (r *runs) add(job *handlers.Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]int{}
	}
	r.m[job.UUID]++
}

func (r *runs) count(uuid string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[uuid]
}

// TestWorkerDrainsAQueueAndLeavesPHPsJob: jobs pushed as dispatch()
// pushes them run once each; the job of a class Go has no handler for,
// behind them, stays in the list byte for byte, and the worker stops as
// empty (it does not spin on it).
func TestWorkerDrainsAQueueAndLeavesPHPsJob(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	var uuids []string
	for i := range 50 {
		uuids = append(uuids, e.push(t, "", classA, phpserialize.Public("i", phpserialize.Int(int64(i)))))
	}
	e.push(t, "", classB)
	phpJob := e.list(t, "default")[50]
	var r runs
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error { r.add(job); return nil })
	w := e.worker(t, reg, workerConfig())
	if reason := run(t, w, 30*time.Second); reason != worker.StopEmpty {
		t.Fatalf("stopped for %s", reason)
	}
	for _, u := range uuids {
		if n := r.count(u); n != 1 {
			t.Fatalf("job %s ran %d times", u, n)
		}
	}
	if l := e.list(t, "default"); len(l) != 1 || l[0] != phpJob {
		t.Fatalf("the list holds %q, want PHP's job untouched", l)
	}
	if n := len(e.reserved(t, "default")) + len(e.delayed(t, "default")); n != 0 {
		t.Fatalf("%d jobs reserved or delayed", n)
	}
	if st := w.Stats(); st.Done != 50 || st.Lost != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestWorkerRunsItsJobsBehindAJobItDoesNotServe: one job Go does not
// serve at the head of a Go-only queue (a class with no handler, a job
// with no displayName) no longer holds back the 300 jobs behind it: they
// all run once, within seconds, and the job is still there for PHP,
// byte for byte, logged once and reported. A head that is not JSON,
// which PHP's pop would lose, is failed with its cause, and the jobs
// behind it run too.
func TestWorkerRunsItsJobsBehindAJobItDoesNotServe(t *testing.T) {
	noName := `{"uuid":"no-name","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\X","command":"O:1:\"X\":0:{}"},"id":"nn","attempts":0}`
	for name, head := range map[string]string{"no handler": "", "no displayName": noName, "not JSON": "not json"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, appconfig.EngineSQLite, envOptions{})
			if head == "" {
				e.push(t, "", classB)
			} else {
				e.rc.RPush(e.ctx, e.q.Config().Keys("").Ready, head)
				e.rc.RPush(e.ctx, e.q.Config().Keys("").Notify, 1)
			}
			first := e.list(t, "default")[0]
			var uuids []string
			for i := range 300 {
				uuids = append(uuids, e.push(t, "", classA, phpserialize.Public("i", phpserialize.Int(int64(i)))))
			}
			var r runs
			reg := handlers.NewRegistry()
			reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error { r.add(job); return nil })
			cfg := workerConfig()
			cfg.Concurrency = 8
			started := time.Now()
			w := e.worker(t, reg, cfg)
			if reason := run(t, w, 30*time.Second); reason != worker.StopEmpty {
				t.Fatalf("stopped for %s", reason)
			}
			took := time.Since(started)
			for _, u := range uuids {
				if n := r.count(u); n != 1 {
					t.Fatalf("job %s ran %d times", u, n)
				}
			}
			t.Logf("300 jobs behind the head ran in %s", took)
			if took > 10*time.Second {
				t.Errorf("the jobs behind the head took %s", took)
			}
			if n := len(e.reserved(t, "default")) + len(e.delayed(t, "default")); n != 0 {
				t.Fatalf("%d jobs reserved or delayed", n)
			}
			if head == "not json" {
				if l := e.list(t, "default"); len(l) != 0 {
					t.Fatalf("left in the list: %q", l)
				}
				if f := e.failed(t); len(f) != 1 || f[0].Payload != head || !strings.Contains(f[0].Exception, "cannot read") {
					t.Fatalf("failed rows %+v, want the unreadable head with its cause", f)
				}
				return
			}
			if l := e.list(t, "default"); len(l) != 1 || l[0] != first {
				t.Fatalf("the list holds %q, want the job Go does not serve, untouched", l)
			}
			if n := strings.Count(e.logs.String(), "no handler"); n != 1 {
				t.Fatalf("logged %d times:\n%s", n, e.logs)
			}
			if l := e.s.LeftNow(); len(l) != 1 || l[0].Jobs != 1 || l[0].Reason != ReasonClass {
				t.Fatalf("left now %+v", l)
			}
		})
	}
}

// TestWorkerSettlesEachCopyOfAPayloadPushedTwice: the same payload pushed
// twice (byte for byte) would share one reservation; the second copy waits
// at the head until the first is settled, so each copy is settled on its
// own: a readable one runs twice, an unreadable one fails twice, nothing
// is lost, and the copy left waiting is counted.
func TestWorkerSettlesEachCopyOfAPayloadPushedTwice(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	uuid := e.push(t, "", classA)
	pushed := e.list(t, "default")[0]
	ctx := context.Background()
	k := e.q.Config().Keys("")
	for _, r := range []string{pushed, "not json", "not json"} {
		if err := e.rc.RPush(ctx, k.Ready, r).Err(); err != nil {
			t.Fatal(err)
		}
		e.rc.RPush(ctx, k.Notify, 1)
	}
	var r runs
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error { r.add(job); return nil })
	cfg := workerConfig()
	cfg.Concurrency = 4
	w := e.worker(t, reg, cfg)
	run(t, w, 30*time.Second)
	if n := r.count(uuid); n != 2 {
		t.Errorf("the job pushed twice ran %d times, want 2", n)
	}
	if f := e.failed(t); len(f) != 2 || f[0].Payload != "not json" || f[1].Payload != "not json" {
		t.Errorf("failed rows %+v, want both unreadable copies", f)
	}
	if got := e.keys(t); got != "" {
		t.Errorf("left in Redis: %s", got)
	}
	if st := w.Stats(); st.Lost != 0 {
		t.Errorf("stats %+v: a copy's outcome was dropped as lost", st)
	}
	copies := int64(0)
	for _, l := range e.s.Left() {
		if l.Reason == ReasonCopy {
			copies += l.Jobs
		}
	}
	if copies == 0 {
		t.Errorf("no copy counted as left waiting: %+v", e.s.Left())
	}
}

// TestWorkerReleasesWithBackoffThenFails: each failed attempt is
// released into the delayed set for its backoff, with the attempt
// counted; the last one lands in failed_jobs under the redis connection
// with the payload PHP's failer would store.
func TestWorkerReleasesWithBackoffThenFails(t *testing.T) {
	forEachEngine(t, envOptions{}, func(t *testing.T, e *env) {
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return errors.New("smtp is down") })
		uuid := e.push(t, "mail", classA, phpserialize.Public("tries", phpserialize.Int(3)),
			phpserialize.Public("backoff", phpserialize.List(phpserialize.Int(5), phpserialize.Int(60))))
		cfg := workerConfig()
		cfg.Queues = []string{"mail"}
		for attempt, delay := range []int64{5, 60} {
			before := time.Now().Unix()
			run(t, e.worker(t, reg, cfg), 30*time.Second)
			d := e.delayed(t, "mail")
			if len(d) != 1 || field(t, d[0].Member.(string), "attempts") != float64(attempt+1) {
				t.Fatalf("attempt %d: delayed set %v", attempt+1, d)
			}
			if got := int64(d[0].Score) - before; got < delay || got > delay+1 {
				t.Fatalf("attempt %d: released for %d s, want %d", attempt+1, got, delay)
			}
			if len(e.failed(t)) != 0 {
				t.Fatal("failed too early")
			}
			e.makeDue(t, "mail")
		}
		run(t, e.worker(t, reg, cfg), 30*time.Second)
		failed := e.failed(t)
		if len(failed) != 1 || failed[0].UUID != uuid || failed[0].Connection != "redis" || failed[0].Queue != "mail" {
			t.Fatalf("failed %+v", failed)
		}
		if field(t, failed[0].Payload, "attempts") != 2.0 {
			t.Fatalf("failed payload %s: want the list's bytes (attempts 2)", failed[0].Payload)
		}
		if !strings.Contains(failed[0].Exception, "smtp is down") {
			t.Fatalf("exception %q", failed[0].Exception)
		}
		if k := e.keys(t); strings.Contains(k, "queues:mail ") || strings.Contains(k, ":delayed") || strings.Contains(k, ":reserved") {
			t.Fatalf("left in Redis:\n%s", k)
		}
	})
}

// TestWorkerChainsAndBatchesOnRedis: a chain PHP dispatched runs link
// after link, each pushed by Go onto Redis; a batch member's success and
// failure count in job_batches, and the failure cancels the batch.
func TestWorkerChainsAndBatchesOnRedis(t *testing.T) {
	forEachEngine(t, envOptions{}, func(t *testing.T, e *env) {
		var steps []string
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\ChainLinkJob`, func(_ context.Context, job *handlers.Job) error {
			var cmd struct {
				Step int64 `php:"step"`
			}
			if err := job.Decode(&cmd); err != nil {
				return err
			}
			steps = append(steps, fmt.Sprintf("%d@%s", cmd.Step, job.Queue))
			return nil
		})
		fail := false
		reg.HandleFunc(`App\Jobs\BatchMemberJob`, func(context.Context, *handlers.Job) error {
			if fail {
				return errors.New("member failed")
			}
			return nil
		})
		e.pushRaw(t, "chains", fixture(t, "chain.json"))
		cfg := workerConfig()
		cfg.Queues = []string{"chains", "default"}
		cfg.Concurrency = 1
		run(t, e.worker(t, reg, cfg), 30*time.Second)
		if got := strings.Join(steps, " "); got != "1@chains 2@chains 3@chains" {
			t.Fatalf("chain ran as %q", got)
		}

		e.insertBatch(t, fixtureBatchID, 3, fixture(t, "batch.options.txt"))
		e.pushRaw(t, "", fixture(t, "batch-member.json"))
		run(t, e.worker(t, reg, cfg), 30*time.Second)
		if b := e.batch(t, fixtureBatchID); b.PendingJobs != 2 || b.FailedJobs != 0 {
			t.Fatalf("batch after a success %+v", b)
		}
		fail = true
		member2 := e.pushRaw(t, "", fixture(t, "batch-member-2.json"))
		run(t, e.worker(t, reg, cfg), 30*time.Second)
		b := e.batch(t, fixtureBatchID)
		if b.PendingJobs != 2 || b.FailedJobs != 1 || !b.Cancelled() || len(b.FailedJobIDs) != 1 || b.FailedJobIDs[0] != member2 {
			t.Fatalf("batch after a failure %+v", b)
		}
		if f := e.failed(t); len(f) != 1 || f[0].UUID != member2 {
			t.Fatalf("failed %+v", f)
		}
		if k := e.keys(t); strings.Contains(k, "(list)") || strings.Contains(k, "(zset)") {
			t.Fatalf("left in Redis:\n%s", k)
		}
	})
}

// TestWorkerLeavesBatchesWithPHPCallbacksOnce: a job whose batch has PHP
// closures is given back untouched, once: the claims then leave it at
// the head instead of popping it again.
func TestWorkerLeavesBatchesWithPHPCallbacksOnce(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	member := fixture(t, "batch-callbacks-member.json")
	p, _ := payload.Parse(member)
	cmd, err := payload.DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.insertBatch(t, *cmd.Queueable().BatchID, 3, fixture(t, "batch-callbacks.options.txt"))
	e.pushRaw(t, "", member)
	listed := e.list(t, "default")
	ran := false
	reg := handlers.NewRegistry()
	reg.HandleFunc(p.DisplayName, func(context.Context, *handlers.Job) error { ran = true; return nil })
	w := e.worker(t, reg, workerConfig())
	if reason := run(t, w, 30*time.Second); reason != worker.StopEmpty {
		t.Fatalf("stopped for %s", reason)
	}
	if ran || w.Claimed() != 1 {
		t.Fatalf("ran %v, claimed %d times", ran, w.Claimed())
	}
	if l := e.list(t, "default"); len(l) != 1 || l[0] != listed[0] {
		t.Fatalf("list %q, want the job as it was pushed", l)
	}
}

// TestWorkerDoesNotSpinOnAForeignHead: a worker that never stops by
// itself, in front of a queue headed by a job it has no handler for,
// claims at its sleep's pace, not in a busy loop, and logs the class
// once.
func TestWorkerDoesNotSpinOnAForeignHead(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	e.push(t, "", classB)
	before := e.keys(t)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return nil })
	cfg := workerConfig()
	cfg.StopWhenEmpty = false
	cfg.Sleep = 100 * time.Millisecond
	cfg.MaxTime = 2 * time.Second
	evals := func() int64 {
		calls := testredis.CommandCalls(t, e.rc)
		return calls["evalsha"] + calls["eval"]
	}
	start := evals()
	if reason := run(t, e.worker(t, reg, cfg), 30*time.Second); reason != worker.StopMaxTime {
		t.Fatalf("stopped for %s", reason)
	}
	if n := evals() - start; n > 40 {
		t.Fatalf("%d scripts in 2 s with a 100 ms sleep: the worker spins", n)
	}
	if after := e.keys(t); after != before {
		t.Fatalf("the foreign job was touched:\n%s\n%s", before, after)
	}
	if l := e.s.Left(); len(l) != 1 || l[0].Jobs != 1 {
		t.Fatalf("left %+v", l)
	}
	if n := strings.Count(e.logs.String(), "no handler"); n != 1 {
		t.Fatalf("logged %d times", n)
	}
}

// TestWorkerSharesMaxExceptionsAndRestart: maxExceptions counters and
// the queue:restart signal go through the app's cache store, the
// database one or the redis one, where PHP keeps them.
func TestWorkerSharesMaxExceptionsAndRestart(t *testing.T) {
	stores := map[string]envOptions{
		"database": {dbCache: true},
		"redis": {storeOpts: func(e *env) Options {
			cacheDB := redis.NewClient(&redis.Options{Addr: e.srv.Addr, DB: 1, Protocol: 2, DisableIdentity: true})
			t.Cleanup(func() { cacheDB.Close() })
			return Options{Cache: rediscache.New(cacheDB, prefix+"laravel_cache:")}
		}},
	}
	for name, o := range stores {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, appconfig.EngineSQLite, o)
			cache := e.s.SharedCache()
			if cache == nil {
				t.Fatal("no shared cache")
			}
			reg := handlers.NewRegistry()
			reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return errors.New("flaky again") })
			uuid := e.push(t, "", classA, phpserialize.Public("tries", phpserialize.Int(10)), phpserialize.Public("maxExceptions", phpserialize.Int(2)))
			// PHP counted one exception already.
			if err := cache.Put(e.ctx, "job-exceptions:"+uuid, []byte("i:1;"), 24*time.Hour); err != nil {
				t.Fatal(err)
			}
			cfg := workerConfig()
			cfg.Backoff = "60"
			w := e.worker(t, reg, cfg)
			run(t, w, 30*time.Second)
			if f := e.failed(t); len(f) != 1 || f[0].UUID != uuid || w.Claimed() != 1 {
				t.Fatalf("want the job failed on its first Go exception: failed %+v, runs %d", f, w.Claimed())
			}
			if _, ok, _ := cache.Get(e.ctx, "job-exceptions:"+uuid); ok {
				t.Fatal("the counter must be forgotten once the job fails")
			}

			if err := cache.Put(e.ctx, "illuminate:queue:restart", []byte("i:1700000000;"), 24*time.Hour); err != nil {
				t.Fatal(err)
			}
			cfg = workerConfig()
			cfg.StopWhenEmpty = false
			w = e.worker(t, reg, cfg)
			done := make(chan worker.StopReason, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			go func() { done <- w.Run(ctx) }()
			// The worker reads the signal once, before its first claim
			// loop: a change after that stops it.
			waitUntil(t, 15*time.Second, "the worker's first claim loop", func() bool { return w.Stats().Loops > 0 })
			if err := cache.Put(e.ctx, "illuminate:queue:restart", []byte("i:1700000100;"), 24*time.Hour); err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-done:
				if r != worker.StopRestart {
					t.Fatalf("stopped for %s", r)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("queue:restart did not stop the worker")
			}
		})
	}
}

// TestWorkerLeaseKeepsALongJob: a job running past retry_after keeps its
// reservation; another worker popping all along never gets it.
func TestWorkerLeaseKeepsALongJob(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{retryAfter: 3 * time.Second})
	started, finish := make(chan struct{}), make(chan struct{})
	var ran atomic.Int32
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error {
		ran.Add(1)
		close(started)
		<-finish // the test lets it end after > 2 x retry_after
		return nil
	})
	e.push(t, "", classA, phpserialize.Public("timeout", phpserialize.Int(0)))
	cfg := workerConfig()
	cfg.LeaseEvery = 300 * time.Millisecond
	w := e.worker(t, reg, cfg)
	done := make(chan worker.StopReason, 1)
	go func() { done <- run(t, w, time.Minute) }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not start")
	}
	other, _ := redisproto.New(e.rc, e.q.Config())
	// Another worker pops all along for more than twice retry_after (the
	// expiry under test is the server's clock): it never gets the job.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(6500 * time.Millisecond); time.Now().Before(deadline); <-tick.C {
		res, err := other.Pop(e.ctx, "", redisproto.PopOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Jobs) != 0 {
			t.Fatalf("a running job was popped again (attempt %d)", res.Jobs[0].Attempts)
		}
	}
	close(finish)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not stop")
	}
	if ran.Load() != 1 || len(e.reserved(t, "default")) != 0 {
		t.Fatalf("ran %d, reserved %v", ran.Load(), e.reserved(t, "default"))
	}
}

// TestFrozenWorkerWritesNothing: while the handler runs (the worker's
// lease frozen), its reservation expires and another worker pops the job
// (and maybe finishes it). Whatever the handler then decides, the worker
// writes nothing: no delete of the other worker's member, no released
// copy, no failed_jobs row, no next chain link, no batch counter.
func TestFrozenWorkerWritesNothing(t *testing.T) {
	plain := func(t *testing.T) []byte { return built(t, classA) }
	ok := func(context.Context, *handlers.Job) error { return nil }
	cases := []struct {
		name    string
		queue   string
		raw     func(t *testing.T) []byte
		handler func(context.Context, *handlers.Job) error
	}{
		{"success", "default", plain, ok},
		{"release", "default", plain, func(_ context.Context, job *handlers.Job) error { job.Release(0); return nil }},
		{"failure", "default", plain, func(context.Context, *handlers.Job) error { return errors.New("boom") }},
		{"chain link", "chains", func(t *testing.T) []byte { return fixture(t, "chain.json") }, ok},
		{"batch success", "default", func(t *testing.T) []byte { return fixture(t, "batch-member.json") }, ok},
		{"batch failure", "default", func(t *testing.T) []byte { return fixture(t, "batch-member.json") },
			func(context.Context, *handlers.Job) error { return errors.New("boom") }},
	}
	forEachEngine(t, envOptions{}, func(t *testing.T, e *env) {
		for _, c := range cases {
			for _, finished := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/finished elsewhere %v", c.name, finished), func(t *testing.T) {
					if err := e.rc.FlushAll(e.ctx).Err(); err != nil { // the test's own server
						t.Fatal(err)
					}
					e.db.DB().Exec("delete from " + e.db.Config().BatchesTable)
					e.insertBatch(t, fixtureBatchID, 2, fixture(t, "batch.options.txt"))
					e.pushRaw(t, c.queue, c.raw(t))
					var other *redisproto.Job
					reg := handlers.NewRegistry()
					handler := func(ctx context.Context, job *handlers.Job) error {
						other = e.takeOverOnly(t, c.queue)
						if finished {
							e.finishElsewhere(t, other)
						}
						return c.handler(ctx, job)
					}
					for _, class := range []string{classA, `App\Jobs\ChainLinkJob`, `App\Jobs\BatchMemberJob`} {
						reg.HandleFunc(class, handler)
					}
					cfg := workerConfig()
					cfg.Queues = []string{c.queue}
					cfg.LeaseEvery = time.Hour
					cfg.Tries = 1
					cfg.MaxJobs = 1
					w := e.worker(t, reg, cfg)
					run(t, w, 30*time.Second)
					want := ""
					if !finished {
						want = other.Reserved
					}
					var got string
					for _, z := range e.reserved(t, c.queue) {
						got += z.Member.(string)
					}
					if got != want {
						t.Errorf("reserved set %q, want the other worker's member only", got)
					}
					if l := e.list(t, c.queue); len(l) != 0 {
						t.Errorf("list %q: a link or copy was pushed", l)
					}
					for _, q := range []string{c.queue, "chains", "default"} {
						if d := e.delayed(t, q); len(d) != 0 {
							t.Errorf("delayed %s: %v", q, d)
						}
					}
					if f := e.failed(t); len(f) != 0 {
						t.Errorf("failed rows %+v", f)
					}
					if b := e.batch(t, fixtureBatchID); b.PendingJobs != 2 || b.FailedJobs != 0 || b.Cancelled() {
						t.Errorf("batch %+v", b)
					}
					if st := w.Stats(); st.Lost != 1 {
						t.Errorf("stats %+v, want the outcome counted lost", st)
					}
				})
			}
		}
	})
}

// takeOverOnly is takeOver of the only job reserved on queue.
func (e *env) takeOverOnly(t *testing.T, queue string) *redisproto.Job {
	t.Helper()
	r := e.reserved(t, queue)
	if len(r) != 1 {
		t.Fatalf("reserved %v", r)
	}
	return e.takeOver(t, jobqueue.JobRow{Queue: queue, Reservation: r[0].Member.(string)})
}
