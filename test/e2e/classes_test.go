package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/redis/go-redis/v9"
)

// classworker is test/e2e/cmd/classworker: laraworker as a library program
// whose registrations declare the app's classes (unique, models).
var (
	classworkerOnce sync.Once
	classworkerBin  string
	classworkerErr  error
)

func (s *suite) classworker(t *testing.T, extraEnv []string, args ...string) string {
	t.Helper()
	return s.run(t, s.classworkerCmd(t, extraEnv, args...))
}

// classworkerCmd is classworker's `work` command, not started.
func (s *suite) classworkerCmd(t *testing.T, extraEnv []string, args ...string) *exec.Cmd {
	t.Helper()
	classworkerOnce.Do(func() {
		root, err := repoRoot()
		if err != nil {
			classworkerErr = err
			return
		}
		classworkerBin = filepath.Join(filepath.Dir(s.recorder), "classworker")
		classworkerErr = goBuild(root, classworkerBin, "./test/e2e/cmd/classworker")
	})
	if classworkerErr != nil {
		t.Fatal(classworkerErr)
	}
	cmd := exec.Command(classworkerBin, append([]string{"work", "--sleep", "0.2", "--laravel-version", "8.83"}, args...)...)
	cmd.Dir = s.app
	cmd.Env = s.env(append([]string{"LARAWORKER_E2E_RECORDER=" + s.recorder}, extraEnv...)...)
	return cmd
}

// lockCount counts the unique-job locks PHP holds in cache_locks.
func (s *suite) lockCount(t *testing.T) int {
	t.Helper()
	var n int
	d := s.q.Dialect()
	if err := s.q.DB().QueryRowContext(s.ctx(t), d.Rebind("select count(*) from cache_locks where "+d.Quote("key")+" like ?"),
		"%laravel_unique_job:%").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestUniqueLocksReleasedByGo: Laravel 8.83 takes a ShouldBeUnique job's
// lock in the database cache store at dispatch and drops a second
// dispatch while it is held. After Go ran the job (or failed it for good)
// the lock is gone, so the next dispatch is queued again and PHP runs it.
func TestUniqueLocksReleasedByGo(t *testing.T) { onEachDB(t, testUniqueLocksReleasedByGo) }

func testUniqueLocksReleasedByGo(t *testing.T, s *suite) {
	s.exec(t, "delete from cache_locks")
	s.artisan(t, "app:dispatch", "unique")
	s.artisan(t, "app:dispatch", "unique-2")
	s.artisan(t, "app:dispatch", "unique") // dropped: the lock is held
	if n, locks := len(s.jobs(t)), s.lockCount(t); n != 2 || locks != 2 {
		t.Fatalf("after three dispatches: %d jobs, %d locks; want 2 and 2 (PHP drops the duplicate)", n, locks)
	}

	// productId 1 succeeds in Go, productId 2 fails in Go (tries 1).
	s.classworker(t, []string{"RECORDER_FAIL_WHEN=productId=2"}, "--stop-when-empty")
	if left := s.queuedJobs(t); len(left) != 0 {
		t.Fatalf("jobs left after Go: %+v", left)
	}
	if hooks := s.hookJobs(t); len(hooks) != 1 {
		t.Fatalf("%d hook jobs, want the failure's", len(hooks))
	}
	if f := s.failed(t); len(f) != 1 {
		t.Fatalf("%d failed jobs, want productId 2's", len(f))
	}
	if locks := s.lockCount(t); locks != 0 {
		t.Fatalf("%d unique locks left after Go ran and failed the jobs", locks)
	}

	// The next dispatches are queued again, and PHP runs them.
	s.artisan(t, "app:dispatch", "unique")
	s.artisan(t, "app:dispatch", "unique-2")
	if n := len(s.queuedJobs(t)); n != 2 {
		t.Fatalf("%d jobs after dispatching again, want 2: Laravel dropped them, a lock is still held", n)
	}
	s.phpWork(t, "--stop-when-empty")
	var goRuns, phpRuns int
	for _, r := range s.runs(t) {
		if r.Class != `App\Jobs\UniqueJob` {
			continue
		}
		switch r.Worker {
		case "go":
			goRuns++
		case "php":
			phpRuns++
		}
	}
	if goRuns != 2 || phpRuns != 2 {
		t.Errorf("UniqueJob runs: go %d, php %d; want 2 and 2", goRuns, phpRuns)
	}
	if locks := s.lockCount(t); locks != 0 {
		t.Errorf("%d locks left after PHP ran the jobs", locks)
	}
}

// TestMissingModelsAsLaravel8: a job whose podcast was deleted after
// dispatch is deleted without running (DeletableModelJob declares
// deleteWhenMissingModels; its registration says so) or failed at once
// with Laravel's ModelNotFoundException (ModelsJob), as PHP does with the
// same rows; a job whose models exist runs.
func TestMissingModelsAsLaravel8(t *testing.T) { onEachDB(t, testMissingModelsAsLaravel8) }

func testMissingModelsAsLaravel8(t *testing.T, s *suite) {
	outcome := func(run func()) (runs int, failed []failedRow) {
		s.artisan(t, "app:dispatch", "deletable-model")
		s.artisan(t, "app:dispatch", "models")
		s.exec(t, "delete from podcasts where id in (42, 77)")
		before := len(s.runs(t))
		run()
		if left := s.queuedJobs(t); len(left) != 0 {
			t.Fatalf("jobs left: %+v", left)
		}
		s.exec(t, "delete from jobs") // the hook job of Go's failure
		failed = s.failed(t)
		s.exec(t, "delete from failed_jobs")
		return len(s.runs(t)) - before, failed
	}
	phpRuns, phpFailed := outcome(func() { s.phpWork(t, "--stop-when-empty", "--tries=3") })
	goRuns, goFailed := outcome(func() { s.classworker(t, nil, "--stop-when-empty", "--tries", "3") })
	if phpRuns != 0 || goRuns != 0 {
		t.Errorf("jobs with a missing model ran: php %d, go %d", phpRuns, goRuns)
	}
	if len(phpFailed) != 1 || len(goFailed) != 1 {
		t.Fatalf("failed jobs: php %d, go %d; want ModelsJob's, once", len(phpFailed), len(goFailed))
	}
	first := func(s string) string { return strings.SplitN(s, " in ", 2)[0] }
	const want = `Illuminate\Database\Eloquent\ModelNotFoundException: No query results for model [App\Models\Podcast].`
	if first(phpFailed[0].Exception) != want || first(goFailed[0].Exception) != want {
		t.Errorf("exceptions:\n php %.200s\n go  %.200s\nwant %s", phpFailed[0].Exception, goFailed[0].Exception, want)
	}
	for _, f := range append(phpFailed, goFailed...) {
		if p, err := payload.Parse([]byte(f.Payload)); err != nil || p.DisplayName != `App\Jobs\ModelsJob` {
			t.Errorf("failed job %v %v, want ModelsJob", p, err)
		}
	}

	// With the models there, Go runs both.
	s.artisan(t, "app:dispatch", "deletable-model")
	s.artisan(t, "app:dispatch", "models")
	s.classworker(t, nil, "--stop-when-empty")
	if n := len(s.failed(t)); n != 0 {
		t.Errorf("%d failed with the models present", n)
	}
	ran := map[string]int{}
	for _, r := range s.runs(t) {
		if r.Worker == "go" {
			ran[r.Class]++
		}
	}
	if ran[`App\Jobs\DeletableModelJob`] != 1 || ran[`App\Jobs\ModelsJob`] != 1 {
		t.Errorf("Go ran %v, want each class once", ran)
	}
}

// classFile8 declares the app's classes for `laraworker push`.
const classFile8 = `{
  "App\\Jobs\\DeclaredRetryJob": {"tries": 3, "backoff": [0], "maxExceptions": 3,
    "properties": {"failUntil": {"type": "int"}}},
  "App\\Jobs\\PrivatePropsJob": {"properties": {
    "secret": {"visibility": "private", "type": "string"},
    "level": {"visibility": "protected", "type": "int"},
    "options": {"visibility": "protected", "type": "?array"},
    "visible": {"type": "string"}}}
}`

// TestPushWithDeclaredClass: a class that declares tries/backoff pushed
// with the class file retries in queue:work as its dispatch() does (and
// fails after one attempt without it); private and protected properties
// pushed with their declared visibility reach the PHP object.
func TestPushWithDeclaredClass(t *testing.T) { onEachDB(t, testPushWithDeclaredClass) }

func testPushWithDeclaredClass(t *testing.T, s *suite) {
	classes := filepath.Join(t.TempDir(), "classes.json")
	if err := os.WriteFile(classes, []byte(classFile8), 0o600); err != nil {
		t.Fatal(err)
	}
	s.artisan(t, "app:dispatch", "declared-retry")
	fromPHP := s.jobs(t)[0]
	declared := s.push(t, `App\Jobs\DeclaredRetryJob`, "--class-file", classes, "--prop", "failUntil=2")
	bare := s.push(t, `App\Jobs\DeclaredRetryJob`, "--prop", "failUntil=2")
	private := s.push(t, `App\Jobs\PrivatePropsJob`, "--class-file", classes,
		"--prop", `secret="from Go"`, "--prop", "level=9", "--prop", `options={"mode":"go"}`, "--prop", `visible="seen"`)

	rows := map[string]jobRow{}
	for _, j := range s.jobs(t) {
		rows[j.UUID] = j
	}
	want, _ := payload.Parse([]byte(fromPHP.Payload))
	got, _ := payload.Parse([]byte(rows[declared.UUID].Payload))
	if *got.MaxTries != *want.MaxTries || *got.Backoff != *want.Backoff || *got.MaxExceptions != *want.MaxExceptions {
		t.Errorf("payload options: go %s\nphp %s", rows[declared.UUID].Payload, fromPHP.Payload)
	}

	s.phpWork(t, "--stop-when-empty") // --tries=1, backoff 0
	runs := runsByUUID(s.runs(t))
	if n := len(runs[declared.UUID]); n != 3 {
		t.Errorf("Go-pushed job with declared options ran %d times in PHP, want 3 (2 failures, then success)", n)
	}
	if n := len(runs[fromPHP.UUID]); n != 3 {
		t.Errorf("PHP's own dispatch ran %d times, want 3", n)
	}
	if n := len(runs[bare.UUID]); n != 1 {
		t.Errorf("without the class file the job ran %d times, want 1 (Laravel's --tries=1)", n)
	}
	failed := s.failed(t)
	if len(failed) != 1 || !strings.Contains(failed[0].Payload, bare.UUID) {
		t.Errorf("failed jobs %d, want only the push without the class file", len(failed))
	}
	p := runs[private.UUID]
	if len(p) != 1 {
		t.Fatalf("PrivatePropsJob runs %+v", p)
	}
	r := p[0].Result
	if r["secret"] != "from Go" || num(t, r["level"]) != 9 || !sameJSON(r["options"], map[string]any{"mode": "go"}) || r["visible"] != "seen" {
		t.Errorf("PHP saw %s", p[0].Raw)
	}
}

// TestUniqueLocksInRedisReleasedByGo: with CACHE_DRIVER=redis, Laravel
// 8.83 (phpredis) takes the lock in Redis under REDIS_PREFIX + the cache
// prefix; Go releases that very key, and the next dispatch is queued.
func TestUniqueLocksInRedisReleasedByGo(t *testing.T) {
	onEachDB(t, testUniqueLocksInRedisReleasedByGo)
}

func testUniqueLocksInRedisReleasedByGo(t *testing.T, s *suite) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", Protocol: 2, DisableIdentity: true})
	defer client.Close()
	ctx := s.ctx(t)
	if err := client.Ping(ctx).Err(); err != nil {
		if testdsn.Required() {
			t.Fatalf("Redis: %v", err)
		}
		t.Skipf("no Redis: %v", err)
	}
	prefix := fmt.Sprintf("laraworker_e2e_%d_", time.Now().UnixNano())
	t.Cleanup(func() {
		if keys, _ := client.Keys(context.Background(), prefix+"*").Result(); len(keys) > 0 {
			client.Del(context.Background(), keys...)
		}
	})
	env := []string{"CACHE_DRIVER=redis", "REDIS_PREFIX=" + prefix}
	dispatch := func(kind string) {
		cmd := s.phpCmd("app:dispatch", kind)
		cmd.Env = append(cmd.Env, env...)
		s.run(t, cmd)
	}
	// RedisStore on 8-10 adds ":" to the cache prefix.
	key := prefix + `laravel_cache:laravel_unique_job:App\Jobs\UniqueJob1`
	dispatch("unique")
	dispatch("unique")
	if n, _ := client.Exists(ctx, key).Result(); n != 1 || len(s.jobs(t)) != 1 {
		t.Fatalf("after two dispatches: lock %s exists %d, %d jobs; want the lock and one job", key, n, len(s.jobs(t)))
	}
	s.classworker(t, env, "--stop-when-empty")
	if n, _ := client.Exists(ctx, key).Result(); n != 0 {
		t.Fatalf("the Redis lock is still there after Go ran the job")
	}
	dispatch("unique")
	if n := len(s.jobs(t)); n != 1 {
		t.Fatalf("%d jobs after dispatching again, want 1", n)
	}
}
