package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/redis/go-redis/v9"
)

// The Go worker's side of the bridge's hooks, end to end on the Laravel
// 8.83 test app: `laraworker work` runs the classes the bridge routes to
// "go" (through the recorder, which fails the jobs labelled "fail"), and a
// `php artisan queue:work` serving the hooks queue ("default") runs what
// Go hands back: failed(), JobFailed, batch then/catch/finally, chain
// catch.

// needConcurrentPHP skips SQLite: a PHP worker there stops at the first
// "database is locked" while another process writes.
func needConcurrentPHP(t *testing.T, s *suite) {
	if s.driver == "sqlite" {
		t.Skip("PHP workers on SQLite stop at the first \"database is locked\"; run with mysql or pgsql")
	}
}

// goRoute sends HookedJob to the recorder, failing the jobs whose label
// is failLabel ("" fails none).
func (s *suite) goRoute(failLabel string) string {
	if failLabel == "" {
		return s.route(hookedJob)
	}
	return s.route(hookedJob, "-fail", "boom in Go", "-when", "label="+failLabel)
}

// runsOf are the runs of class ("": any) by worker ("": any).
func runsOf(runs []runRow, class, worker string) []runRow {
	var out []runRow
	for _, r := range runs {
		if (class == "" || r.Class == class) && (worker == "" || r.Worker == worker) {
			out = append(out, r)
		}
	}
	return out
}

// hookedFailures are the failed_jobs rows of HookedJob, by uuid; a hook
// job that failed is an error.
func (s *suite) hookedFailures(t *testing.T) map[string]failedRow {
	t.Helper()
	out := map[string]failedRow{}
	for _, f := range s.failed(t) {
		if !strings.Contains(f.Payload, `"displayName":"App\\Jobs\\Hooks\\HookedJob"`) {
			t.Errorf("failed_jobs holds %s", f.Payload[:min(len(f.Payload), 200)])
			continue
		}
		out[f.UUID] = f
	}
	return out
}

// checkFailureHooksRanOnce: failed() ran in PHP once per failed_jobs row
// of HookedJob, with Go's exception, and JobFailed fired once for each,
// with the failed job's uuid, connection and queue.
func checkFailureHooksRanOnce(t *testing.T, runs []runRow, failures map[string]failedRow) {
	t.Helper()
	checkFailureHooksRanOnceOn(t, runs, failures, "database", "go")
}

func checkFailureHooksRanOnceOn(t *testing.T, runs []runRow, failures map[string]failedRow, connection, queue string) {
	t.Helper()
	failed := runsOf(runs, "failed:"+hookedJob, "php")
	if len(failed) != len(failures) {
		t.Errorf("failed() ran %d times, want %d (one per failure)", len(failed), len(failures))
	}
	for _, r := range failed {
		if r.Result["exception"] != goJobException && r.Result["exception"] != `Illuminate\Queue\MaxAttemptsExceededException` {
			t.Errorf("failed() got %v", r.Result)
		}
	}
	events := map[string]int{}
	for _, r := range runsOf(runs, "event:JobFailed", "php") {
		events[r.Result["uuid"].(string)]++
		if r.Result["jobClass"] != goQueueJobClass || r.Result["queue"] != queue || r.Result["connection"] != connection {
			t.Errorf("JobFailed got %v", r.Result)
		}
	}
	for uuid := range failures {
		if events[uuid] != 1 {
			t.Errorf("JobFailed fired %d times for %s, want once", events[uuid], uuid)
		}
	}
	if len(events) != len(failures) {
		t.Errorf("JobFailed fired for %d jobs, %d failed", len(events), len(failures))
	}
}

// TestGoFailuresRunFailedInPHP: a class with failed() moved to Go with the
// bridge: Go runs every job, fails a third of them, and for each failure
// failed() runs in PHP once (with Go's exception) and JobFailed fires
// there once; no hook job fails, none is left, PHP runs no HookedJob.
func TestGoFailuresRunFailedInPHP(t *testing.T) { onEachDB(t, testGoFailuresRunFailedInPHP) }

func testGoFailuresRunFailedInPHP(t *testing.T, s *suite) {
	needConcurrentPHP(t, s)
	s.installHookConfig(t, true)
	php := s.start(t, s.phpCmd("queue:work", "--queue=default", "--sleep=1"))
	s.hooks(t, "hooked-many")
	s.work(t, "--queue", "go", "--stop-when-empty", s.goRoute("fail"))
	s.waitUntil(t, "PHP ran the hooks of Go's 10 failures", func() bool {
		return len(s.jobs(t)) == 0 && len(runsOf(s.runs(t), "event:JobFailed", "php")) >= 10
	})
	stop(t, php)
	runs := s.runs(t)
	if n := len(runsOf(runs, hookedJob, "go")); n != 30 {
		t.Errorf("Go ran %d HookedJobs, want 30", n)
	}
	if n := len(runsOf(runs, hookedJob, "php")); n != 0 {
		t.Errorf("PHP ran %d HookedJobs, want none", n)
	}
	failures := s.hookedFailures(t)
	if len(failures) != 10 {
		t.Fatalf("%d failed jobs, want 10", len(failures))
	}
	checkFailureHooksRanOnce(t, runs, failures)
	for _, r := range runsOf(runs, "failed:"+hookedJob, "php") {
		if r.Result["label"] != "fail" || !strings.Contains(r.Result["message"].(string), "boom in Go") || r.Result["goClass"] == nil {
			t.Errorf("failed() got %v", r.Result)
		}
	}
}

// TestGoBatchCallbacksRunInPHP: the members of a Bus::batch with
// then/catch/finally run in Go (route_batches_with_callbacks on, the
// default); the callbacks run in PHP as Laravel's Batch runs them, each
// once: with one member failing, catch and finally (no then); with all
// succeeding, then and finally. A chain link failing in Go has its
// chain's catch callbacks run in PHP, and the chain stops.
func TestGoBatchCallbacksRunInPHP(t *testing.T) { onEachDB(t, testGoBatchCallbacksRunInPHP) }

func testGoBatchCallbacksRunInPHP(t *testing.T, s *suite) {
	needConcurrentPHP(t, s)
	s.installHookConfig(t, true)
	php := s.start(t, s.phpCmd("queue:work", "--queue=default", "--sleep=1"))
	for _, c := range []struct {
		name, fail                   string
		then, catch, finally, failed int
	}{
		{"member 2 fails", "member 2", 0, 1, 1, 1},
		{"all succeed", "", 1, 0, 1, 0},
	} {
		mark := lastRunID(s.runs(t))
		id := dispatchedBatch(t, s.hooks(t, "hooked-batch"))
		if on := s.batchMembers(t, "go"); len(on) != 3 {
			t.Fatalf("%s: members on go %+v", c.name, on)
		}
		s.work(t, "--queue", "go", "--stop-when-empty", s.goRoute(c.fail))
		s.waitUntil(t, c.name+": PHP ran the batch's finally", func() bool {
			return len(s.jobs(t)) == 0 && len(runsOf(s.runsSince(t, mark), "batch:finally", "php")) >= 1
		})
		time.Sleep(500 * time.Millisecond) // a second finally would show now
		runs := s.runsSince(t, mark)
		for what, want := range map[string]int{"batch:then": c.then, "batch:catch": c.catch, "batch:finally": c.finally, "failed:" + hookedJob: c.failed, hookedJob: 0} {
			if got := len(runsOf(runs, what, "php")); got != want {
				t.Errorf("%s: %s ran %d times in PHP, want %d\n%s", c.name, what, got, want, runClasses(runs))
			}
		}
		if n := len(runsOf(runs, hookedJob, "go")); n != 3 {
			t.Errorf("%s: Go ran %d members, want 3", c.name, n)
		}
		b, err := s.batch(t, id)
		if err != nil || b.Pending != int64(c.failed) || b.Failed != int64(c.failed) || b.FinishedAt.Valid != (c.failed == 0) {
			t.Errorf("%s: batch %+v %v", c.name, b, err)
		}
	}

	mark := lastRunID(s.runs(t))
	s.hooks(t, "hooked-chain")
	s.work(t, "--queue", "go", "--stop-when-empty", s.goRoute("link 1"))
	s.waitUntil(t, "PHP ran the chain's catch", func() bool {
		return len(s.jobs(t)) == 0 && len(runsOf(s.runsSince(t, mark), "event:JobFailed", "php")) >= 1
	})
	stop(t, php)
	runs := s.runsSince(t, mark)
	if got := runClasses(runsOf(runs, "", "php")); got != "chain:catch,failed:"+hookedJob+",event:JobFailed" {
		t.Errorf("after a chain link failed in Go, PHP ran %s; want the chain's catch, failed(), JobFailed", got)
	}
	if r := runsOf(runs, "chain:catch", "php"); len(r) != 1 || r[0].Result["exception"] != goJobException || !strings.Contains(r[0].Result["message"].(string), "boom in Go") {
		t.Errorf("chain catch got %+v", r)
	}
	if n := len(runsOf(runs, hookedJob, "")); n != 1 {
		t.Errorf("%d HookedJob runs after the chain's first link failed, want that one", n)
	}
}

// TestGoFailuresWithKilledWorkers: the Go worker is SIGKILLed again and
// again while it fails jobs and runs a batch's members: no hook is lost
// and none runs twice. failed() ran once per failed_jobs row, JobFailed
// fired once per failed job, and the batch's catch and finally ran once
// each (then never: members failed).
func TestGoFailuresWithKilledWorkers(t *testing.T) { onEachDB(t, testGoFailuresWithKilledWorkers) }

func testGoFailuresWithKilledWorkers(t *testing.T, s *suite) {
	needConcurrentPHP(t, s)
	s.installHookConfig(t, true)
	// A job whose worker was killed comes back after retry_after (and
	// fails then: its one try is used up), so keep it short.
	env := []string{"QUEUE_RETRY_AFTER=3"}
	phpCmd := s.phpCmd("queue:work", "--queue=default", "--sleep=1")
	phpCmd.Env = append(phpCmd.Env, env...)
	php := s.start(t, phpCmd)
	s.hooks(t, "hooked-many")
	batchID := dispatchedBatch(t, s.hooks(t, "hooked-batch-many"))

	kills := 0
	deadline := time.Now().Add(3 * time.Minute)
	for len(s.jobsOn(t, "go")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("jobs left on go after %d kills: %d", kills, len(s.jobsOn(t, "go")))
		}
		cmd := s.lwCmd("work", "--queue", "go", "--sleep", "0.2", "--concurrency", "4", s.goRoute("fail"))
		cmd.Env = append(cmd.Env, env...)
		w := s.start(t, cmd)
		time.Sleep(time.Duration(300+kills*137%400) * time.Millisecond)
		killWorker(w.cmd)
		<-w.done
		w.done <- nil
		kills++
	}
	s.waitUntil(t, "PHP ran every hook job", func() bool { return len(s.jobs(t)) == 0 })
	time.Sleep(time.Second)
	stop(t, php)
	t.Logf("%d kills of the Go worker", kills)
	if kills < 3 {
		t.Errorf("only %d kills: the test did not kill the worker during the run", kills)
	}
	runs := s.runs(t)
	failures := s.hookedFailures(t)
	if len(failures) < 18 { // 10 + 8 labelled "fail"; killed jobs fail too
		t.Errorf("%d failures, want at least 18", len(failures))
	}
	interrupted := 0
	for _, f := range failures {
		if strings.Contains(f.Exception, "MaxAttemptsExceededException") {
			interrupted++
		}
	}
	t.Logf("%d failures, %d of jobs whose worker was killed while they ran; %d Go runs of 54 jobs", len(failures), interrupted, len(runsOf(runs, hookedJob, "go")))
	checkFailureHooksRanOnce(t, runs, failures)
	for what, want := range map[string]int{"batch:then": 0, "batch:catch": 1, "batch:finally": 1} {
		if got := len(runsOf(runs, what, "php")); got != want {
			t.Errorf("%s ran %d times, want %d", what, got, want)
		}
	}
	b, err := s.batch(t, batchID)
	if err != nil || b.Pending != b.Failed || b.Failed < 8 {
		t.Errorf("batch %+v %v: want pending = failed (every member counted once), failed >= 8", b, err)
	}
}

// jobsOn are the jobs rows of queue.
func (s *suite) jobsOn(t *testing.T, queue string) []jobRow {
	t.Helper()
	var out []jobRow
	for _, j := range s.jobs(t) {
		if j.Queue == queue {
			out = append(out, j)
		}
	}
	return out
}

// killWorker SIGKILLs the Go worker alone, as a crash would (a recorder
// it started finishes on its own).
func killWorker(cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGKILL) }

// TestUniqueClassMovedToGo: a ShouldBeUnique class routed by the bridge,
// run in Go from a --route (no Go declaration), keeps PHP's lock
// semantics with a PHP worker running: while a job waits, another
// dispatch is dropped; once Go ran it (or failed it) the next dispatch is
// queued; an UntilProcessing job's lock is gone when its handler runs. On
// the database and the redis cache store.
func TestUniqueClassMovedToGo(t *testing.T) { onEachDB(t, testUniqueClassMovedToGo) }

func testUniqueClassMovedToGo(t *testing.T, s *suite) {
	needConcurrentPHP(t, s)
	s.installHookConfig(t, true)
	stores := map[string][]string{"database": {"CACHE_DRIVER=database"}}
	if redisUp(t) {
		prefix := fmt.Sprintf("laraworker_e2e_gohooks_%d_", time.Now().UnixNano())
		stores["redis"] = []string{"CACHE_DRIVER=redis", "REDIS_PREFIX=" + prefix}
		t.Cleanup(func() { dropRedisKeys(prefix) })
	}
	for store, env := range stores {
		t.Run(store, func(t *testing.T) {
			s.exec(t, "delete from cache_locks")
			s.exec(t, "delete from jobs")
			phpCmd := s.phpCmd("queue:work", "--queue=default", "--sleep=1")
			phpCmd.Env = append(phpCmd.Env, env...)
			php := s.start(t, phpCmd)
			defer stop(t, php)
			dispatch := func(kind string) int {
				t.Helper()
				before := len(s.jobsOn(t, "go"))
				cmd := s.phpCmd("app:dispatch", kind)
				cmd.Env = append(cmd.Env, env...)
				s.run(t, cmd)
				return len(s.jobsOn(t, "go")) - before
			}
			goWork := func(args ...string) {
				t.Helper()
				cmd := s.lwCmd(append([]string{"work", "--queue", "go", "--sleep", "0.2", "--stop-when-empty"}, args...)...)
				cmd.Env = append(cmd.Env, env...)
				s.run(t, cmd)
			}
			uniqueRoute := s.route(`App\Jobs\UniqueJob`, "-fail", "boom in Go", "-when", "productId=2")
			if n := dispatch("unique"); n != 1 {
				t.Fatalf("first dispatch queued %d jobs", n)
			}
			if n := dispatch("unique"); n != 0 {
				t.Fatalf("a second dispatch while the first waits queued %d jobs: the lock is not held", n)
			}
			goWork(uniqueRoute)
			if n := dispatch("unique"); n != 1 {
				t.Errorf("after Go ran the job, a dispatch queued %d jobs: Go left the lock", n)
			}
			if n := dispatch("unique-2"); n != 1 {
				t.Fatalf("unique-2 queued %d", n)
			}
			goWork(uniqueRoute) // runs productId 1, fails productId 2
			if n := dispatch("unique-2"); n != 1 {
				t.Errorf("after Go failed the job, a dispatch queued %d jobs: Go left the lock", n)
			}
			goWork(uniqueRoute)
			runs := runsOf(s.runs(t), `App\Jobs\UniqueJob`, "go")
			if len(runs) < 4 {
				t.Errorf("Go ran %d UniqueJobs, want 4", len(runs))
			}

			// UntilProcessing (uniqueFor 0: the lock never expires): held
			// while the job waits, gone once Go ran it.
			untilProcessing := func() int {
				t.Helper()
				before := len(s.jobsOn(t, "go"))
				s.hooks(t, "until-processing", env...)
				return len(s.jobsOn(t, "go")) - before
			}
			if a, b := untilProcessing(), untilProcessing(); a != 1 || b != 0 {
				t.Fatalf("two UntilProcessing dispatches queued %d and %d jobs, want 1 and 0", a, b)
			}
			goWork(s.route(`App\Jobs\Hooks\UntilProcessingJob`))
			if n := untilProcessing(); n != 1 {
				t.Errorf("after Go ran the UntilProcessing job, a dispatch queued %d jobs: Go left the lock", n)
			}
			s.exec(t, "delete from jobs where queue = ?", "go")
		})
	}
}

// redisUp reports whether the machine's Redis answers (the tests use it
// with a key prefix of their own, never flushing it).
func redisUp(t *testing.T) bool {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", Protocol: 2, DisableIdentity: true})
	defer c.Close()
	err := c.Ping(context.Background()).Err()
	if err != nil && testdsn.Required() {
		t.Fatalf("Redis: %v", err)
	}
	return err == nil
}

func dropRedisKeys(prefix string) {
	for _, db := range []int{0, 1} {
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", DB: db, Protocol: 2, DisableIdentity: true})
		if keys, _ := c.Keys(context.Background(), prefix+"*").Result(); len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
		c.Close()
	}
}

// TestModelsClassRoutedFromTheCLI: a class holding a model, run in Go from
// a --route (no Go declaration): its model deleted, the job is deleted
// without running (deleteWhenMissingModels, recorded by the bridge), as
// PHP's queue:work does; a class without it fails with
// ModelNotFoundException.
func TestModelsClassRoutedFromTheCLI(t *testing.T) { onEachDB(t, testModelsClassRoutedFromTheCLI) }

func testModelsClassRoutedFromTheCLI(t *testing.T, s *suite) {
	s.installHookConfig(t, true)
	s.artisan(t, "app:dispatch", "deletable-model")
	s.artisan(t, "app:dispatch", "models")
	if n := len(s.jobsOn(t, "go")); n != 2 {
		t.Fatalf("%d jobs on go, want the two routed ones", n)
	}
	s.exec(t, "delete from podcasts")
	s.work(t, "--queue", "go", "--stop-when-empty", s.route(`App\Jobs\DeletableModelJob`), s.route(`App\Jobs\ModelsJob`))
	runs := s.runs(t)
	if n := len(runsOf(runs, `App\Jobs\DeletableModelJob`, "")) + len(runsOf(runs, `App\Jobs\ModelsJob`, "")); n != 0 {
		t.Errorf("%d runs of jobs whose model was deleted, want none", n)
	}
	if left := s.jobsOn(t, "go"); len(left) != 0 {
		t.Errorf("jobs left on go %+v", left)
	}
	f := s.failed(t)
	if len(f) != 1 || !strings.Contains(f[0].Payload, `ModelsJob`) || !strings.Contains(f[0].Exception, `Illuminate\Database\Eloquent\ModelNotFoundException: No query results for model [App\Models\Podcast].`) {
		t.Errorf("failed jobs %+v: want ModelsJob's ModelNotFoundException alone", f)
	}
}

// TestRedisGoFailuresRunFailedInPHP: on a redis queue connection (the
// hooks queue on the app's database, as such an app configures it), a job
// Go fails has its failed() run once in PHP and JobFailed fired there with
// the redis connection: the hook job was written parked with the
// failed_jobs row, and made available once the job left Redis.
func TestRedisGoFailuresRunFailedInPHP(t *testing.T) { onEachDB(t, testRedisGoFailuresRunFailedInPHP) }

func testRedisGoFailuresRunFailedInPHP(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	a.artisan(t, "app:hooks", "hooked")
	a.artisan(t, "app:hooks", "hooked")
	a.goWork(t, hookedJob, []string{"-fail", "boom in Go"}, "--stop-when-empty")
	failures := s.hookedFailures(t)
	hooks := s.hookJobs(t)
	if len(failures) != 2 || len(hooks) != 2 {
		t.Fatalf("%d failed jobs, %d hook jobs on the database queue; want 2 and 2", len(failures), len(hooks))
	}
	for _, h := range hooks {
		if h.Queue != "default" || h.AvailableAt > s.now() {
			t.Errorf("hook job on %q available at %d: want default, available now (unparked)", h.Queue, h.AvailableAt)
		}
	}
	a.artisan(t, "queue:work", "database", "--queue=default", "--stop-when-empty", "--sleep=0")
	runs := s.runs(t)
	checkFailureHooksRanOnceOn(t, runs, failures, "redis", "default")
	if got := s.redisLeft(t, a); got != "" {
		t.Errorf("left in Redis: %s", got)
	}
}
