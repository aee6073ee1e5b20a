package e2e

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/redis/go-redis/v9"
)

// goCmd is the Go worker on the app's redis connection: `work` of
// test/e2e/cmd/classworker (laraworker's CLI with the app's unique and model
// classes declared), running the recorder for classes (comma-separated;
// UniqueJob is classworker's own registration). recorderArgs make the
// recorder misbehave (-fail MSG, -release).
func (a *redisApp) goCmd(t *testing.T, classes string, recorderArgs []string, args ...string) *exec.Cmd {
	t.Helper()
	flags := []string{"--connection", "redis", "--log-format", "json"}
	for _, class := range strings.Split(classes, ",") {
		if class != "" && class != `App\Jobs\UniqueJob` {
			flags = append(flags, a.s.route(class, recorderArgs...))
		}
	}
	return a.s.classworkerCmd(t, a.env, append(flags, args...)...)
}

// goWork runs the Go worker in the foreground and returns its output.
func (a *redisApp) goWork(t *testing.T, classes string, recorderArgs []string, args ...string) string {
	t.Helper()
	return a.s.run(t, a.goCmd(t, classes, recorderArgs, args...))
}

const noopJob = `App\Jobs\NoopJob`

// TestRedisPHPAndGoDrainOneQueue: `php artisan queue:work redis` and the
// Go worker drain one queue side by side; every job runs once, and
// nothing is left in Redis.
func TestRedisPHPAndGoDrainOneQueue(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { redisPHPAndGoDrainOneQueue(t, s.redisQueue(t), 600) })
}

// redisPHPAndGoDrainOneQueue has both workers running before the jobs
// come, so that both take some whatever their start-up times (Go's reads
// the app through its PHP; PHP alone drains a few hundred no-op jobs in
// under a second): PHP is known to run once it has run a probe job of a
// class Go does not serve, Go once it logs "worker started"; then n jobs
// are dispatched, and both are stopped once all have run.
func redisPHPAndGoDrainOneQueue(t *testing.T, a *redisApp, n int) {
	s := a.s
	goCmd := a.goCmd(t, noopJob, nil, "--sleep", "100ms") // classworker is built before PHP starts
	php := exec.Command("php", "artisan", "queue:work", "redis", "--sleep=0")
	php.Dir, php.Env = s.app, s.env(a.env...)
	phpRun := s.start(t, php)
	a.artisan(t, "app:dispatch", "scalars")
	waitFor(t, 60*time.Second, "PHP's probe job", func() bool { return len(s.runs(t)) == 1 })
	goRun := s.start(t, goCmd)
	waitFor(t, 60*time.Second, "Go's worker started", func() bool { return strings.Contains(goRun.stderr.String(), `"worker started"`) })
	a.artisan(t, "app:dispatch", "noop", "--count="+strconv.Itoa(n))
	waitFor(t, 2*time.Minute, "every job run", func() bool { return len(s.runs(t)) >= n+1 })
	for _, w := range []*background{phpRun, goRun} {
		if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		w.wait(t, time.Minute)
	}
	runs := s.runs(t)
	byWorker := map[string]int{}
	for uuid, rs := range runsByUUID(runs) {
		if len(rs) != 1 || rs[0].Attempt != 1 {
			t.Errorf("job %s ran %d times: %+v", uuid, len(rs), rs)
		}
		if rs[0].Class == noopJob {
			byWorker[rs[0].Worker]++
		}
	}
	if len(runs) != n+1 {
		t.Fatalf("%d runs of %d jobs and the probe", len(runs), n)
	}
	t.Logf("runs by worker: %v", byWorker)
	if byWorker["go"] == 0 || byWorker["php"] == 0 {
		t.Errorf("both workers should have run jobs: %v\nGo's log:\n%s", byWorker, tail(goRun.stderr.String()))
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Errorf("left in Redis: %s", got)
	}
}

// TestRedisGoFailsPHPRetries: a job Go fails is in failed_jobs under the
// redis connection; `php artisan queue:failed` lists it, and
// `php artisan queue:retry` pushes it back onto the Redis queue, where PHP
// runs it as a first attempt again.
func TestRedisGoFailsPHPRetries(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { redisGoFailsPHPRetries(t, s.redisQueue(t)) })
}

func redisGoFailsPHPRetries(t *testing.T, a *redisApp) {
	s := a.s
	a.artisan(t, "app:dispatch", "noop")
	p, _ := payload.Parse([]byte(a.list(t, a.cfg.Queue)[0]))
	a.goWork(t, noopJob, []string{"-fail", "failing as asked"}, "--stop-when-empty")
	failed := s.failed(t)
	if len(failed) != 1 || failed[0].UUID != p.UUID || failed[0].Connection != "redis" || failed[0].Queue != a.cfg.Queue ||
		!strings.Contains(failed[0].Exception, "failing as asked") {
		t.Fatalf("failed rows %+v", failed)
	}
	if listed := a.artisan(t, "queue:failed"); !strings.Contains(listed, p.UUID) || !strings.Contains(listed, "redis") {
		t.Fatalf("queue:failed does not list the job:\n%s", listed)
	}
	a.artisan(t, "queue:retry", p.UUID)
	retried := a.list(t, a.cfg.Queue)
	if len(retried) != 1 || len(s.failed(t)) != 0 {
		t.Fatalf("after queue:retry: list %q, failed %d", retried, len(s.failed(t)))
	}
	a.work(t, "--stop-when-empty")
	runs := runsByUUID(s.runs(t))[p.UUID]
	if len(runs) != 2 || runs[0].Worker != "go" || runs[1].Worker != "php" || runs[1].Attempt != 1 {
		t.Fatalf("runs %+v: want Go's failed attempt, then PHP's first attempt after the retry", runs)
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Errorf("left in Redis: %s", got)
	}
}

// TestRedisDelayedAndReleased: a delayed job waits in the delayed set
// until due, then Go runs it; a job Go releases goes to the delayed set
// with its attempt counted, and PHP runs it as attempt 2.
func TestRedisDelayedAndReleased(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { redisDelayedAndReleased(t, s.redisQueue(t)) })
}

func redisDelayedAndReleased(t *testing.T, a *redisApp) {
	s := a.s
	ctx := s.ctx(t)
	high := a.tagged("high")
	a.artisan(t, "app:dispatch", "delayed", "--delay=3", "--queue="+high)
	delayed, _ := a.rc.ZRangeWithScores(ctx, a.cfg.Keys(high).Delayed, 0, -1).Result()
	if len(delayed) != 1 {
		t.Fatalf("delayed set %v", delayed)
	}
	due := int64(delayed[0].Score)
	a.goWork(t, `App\Jobs\DelayedJob`, nil, "--queue", high, "--stop-when-empty")
	if time.Now().Unix() < due && len(s.runs(t)) != 0 {
		t.Fatal("Go ran a delayed job before it was due")
	}
	untilUnix(due)
	a.goWork(t, `App\Jobs\DelayedJob`, nil, "--queue", high, "--stop-when-empty")
	if runs := s.runs(t); len(runs) != 1 || runs[0].Worker != "go" {
		t.Fatalf("runs %+v", runs)
	}

	s.reset(t)
	a.artisan(t, "app:dispatch", "noop")
	p, _ := payload.Parse([]byte(a.list(t, a.cfg.Queue)[0]))
	a.goWork(t, noopJob, []string{"-release"}, "--max-jobs", "1", "--tries", "3", "--backoff", "2")
	released, _ := a.rc.ZRangeWithScores(ctx, a.cfg.Keys("").Delayed, 0, -1).Result()
	if len(released) != 1 || !strings.Contains(released[0].Member.(string), `"attempts":1`) {
		t.Fatalf("delayed set after Go's release %v", released)
	}
	untilUnix(int64(released[0].Score))
	a.work(t, "--stop-when-empty", "--tries=3")
	runs := runsByUUID(s.runs(t))[p.UUID]
	if len(runs) != 2 || runs[0].Worker != "go" || runs[1].Worker != "php" || runs[1].Attempt != 2 {
		t.Fatalf("runs %+v: want Go's attempt 1, then PHP's attempt 2", runs)
	}
}

// TestRedisQueueRestartStopsGo: `php artisan queue:restart` stops the Go
// worker, with the app's cache store database (the signal in the cache
// table) and redis (the signal in Redis, under the cache prefix).
func TestRedisQueueRestartStopsGo(t *testing.T) { onEachDB(t, testRedisQueueRestartStopsGo) }

func testRedisQueueRestartStopsGo(t *testing.T, s *suite) {
	for _, store := range []string{"database", "redis"} {
		t.Run(store, func(t *testing.T) {
			s.reset(t)
			a := s.redisQueue(t, "CACHE_DRIVER="+store)
			a.artisan(t, "app:dispatch", "noop")
			goRun := s.start(t, a.goCmd(t, noopJob, nil, "--sleep", "100ms"))
			waitFor(t, 30*time.Second, "the Go worker's first job", func() bool { return len(s.runs(t)) == 1 })
			a.artisan(t, "queue:restart")
			goRun.wait(t, 30*time.Second)
			if !strings.Contains(goRun.stderr.String(), `"reason":"restart_signal"`) {
				t.Fatalf("the Go worker stopped otherwise:\n%s", tail(goRun.stderr.String()))
			}
			if store == "redis" {
				cacheDB := redis.NewClient(&redis.Options{Addr: a.srv.Addr, DB: 1, Protocol: 2, DisableIdentity: true})
				defer cacheDB.Close()
				if v, err := cacheDB.Get(s.ctx(t), "laravel_database_laravel_cache:illuminate:queue:restart").Result(); err != nil || v == "" {
					t.Fatalf("the restart signal is not where the redis store keeps it: %q %v", v, err)
				}
			}
		})
	}
}

// TestRedisUniqueLockReleasedByGo: a unique job's lock, taken by PHP's
// dispatch in the app's cache store (database or redis), is released
// when Go has run the job, so the next dispatch is queued again.
func TestRedisUniqueLockReleasedByGo(t *testing.T) { onEachDB(t, testRedisUniqueLockReleasedByGo) }

func testRedisUniqueLockReleasedByGo(t *testing.T, s *suite) {
	for _, store := range []string{"database", "redis"} {
		t.Run(store, func(t *testing.T) {
			s.reset(t)
			s.exec(t, "delete from cache_locks")
			a := s.redisQueue(t, "CACHE_DRIVER="+store)
			locks := func() int {
				if store == "database" {
					return s.lockCount(t)
				}
				keys, err := a.rc.Keys(s.ctx(t), "laravel_database_laravel_cache:laravel_unique_job:*").Result()
				if err != nil {
					t.Fatal(err)
				}
				return len(keys)
			}
			a.artisan(t, "app:dispatch", "unique")
			a.artisan(t, "app:dispatch", "unique") // dropped: the lock is held
			if n, l := len(a.list(t, "default")), locks(); n != 1 || l != 1 {
				t.Fatalf("after two dispatches: %d jobs, %d locks; want 1 and 1", n, l)
			}
			a.goWork(t, `App\Jobs\UniqueJob`, nil, "--stop-when-empty")
			if l := locks(); l != 0 {
				t.Fatalf("%d locks after Go ran the job", l)
			}
			a.artisan(t, "app:dispatch", "unique")
			if n := len(a.list(t, "default")); n != 1 {
				t.Fatalf("the dispatch after Go's run was dropped: %d jobs", n)
			}
		})
	}
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, timeout, what, cond)
}

// untilUnix waits until the wall clock reaches the unix second ts: a
// delayed or released job becomes due by the clock, which is what such a
// test is about.
func untilUnix(ts int64) {
	if d := time.Until(time.Unix(ts, 0)); d > 0 {
		<-time.After(d)
	}
}

// TestRedisChainAndBatchCrossPHPAndGo: a chain and a batch whose jobs
// alternate between a class Go runs (MovableJob) and one only PHP runs:
// Go runs its links and pushes the next onto Redis, PHP runs the next,
// and so on; Go never takes PHP's job at the head of the queue (it takes
// the batch's second MovableJob from behind it), and the batch counts
// every member once and finishes.
func TestRedisChainAndBatchCrossPHPAndGo(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { redisChainAndBatchCrossPHPAndGo(t, s.redisQueue(t)) })
}

func redisChainAndBatchCrossPHPAndGo(t *testing.T, a *redisApp) {
	s := a.s
	const movable = `App\Jobs\MovableJob`
	sides := func() string {
		var out []string
		for _, r := range s.runs(t) {
			out = append(out, r.Class[strings.LastIndex(r.Class, `\`)+1:]+"@"+r.Worker)
		}
		return strings.Join(out, " ")
	}
	alternate := func() {
		a.goWork(t, movable, nil, "--stop-when-empty")
		a.work(t, "--once")
		a.goWork(t, movable, nil, "--stop-when-empty")
	}

	a.artisan(t, "app:dispatch", "movable-chain")
	alternate()
	if got := sides(); got != "MovableJob@go ChainLinkJob@php MovableJob@go" {
		t.Fatalf("the chain ran as %q", got)
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Fatalf("left in Redis after the chain: %s", got)
	}

	if a.cluster != nil {
		// Bus::batch() pushes its members with RedisQueue::bulk, which on
		// 8.83 calls pipeline(): phpredis's RedisCluster has none, so PHP
		// cannot dispatch a batch onto a cluster at all.
		out, err := a.phpCmd("app:dispatch", "movable-batch").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "RedisCluster::pipeline()") {
			t.Fatalf("PHP dispatched a batch onto the cluster (%v): test the batch here too\n%s", err, out)
		}
		return
	}
	s.reset(t)
	id := dispatchedBatch(t, a.artisan(t, "app:dispatch", "movable-batch"))
	alternate()
	if got := sides(); got != "MovableJob@go MovableJob@go BatchMemberJob@php" {
		t.Fatalf("the batch ran as %q", got)
	}
	b, err := s.batch(t, id)
	if err != nil || b.Pending != 0 || b.Failed != 0 || !b.FinishedAt.Valid {
		t.Fatalf("batch %+v %v", b, err)
	}
}

// lw runs the laraworker binary on the app's redis connection.
func (a *redisApp) lw(t *testing.T, args ...string) string {
	t.Helper()
	return a.s.run(t, a.lwCmd(args...))
}

// TestRedisThroughTheCLI: `laraworker` serves the app's redis queue
// connection as read from the app (QUEUE_CONNECTION=redis, or --connection
// redis): push puts a job there as dispatch() would and PHP runs it; work
// runs what PHP dispatched; size counts the queue; a job Go fails is
// listed by failed, retried onto Redis by retry, and clear empties the
// queue.
func TestRedisThroughTheCLI(t *testing.T) { onEachDB(t, testRedisThroughTheCLI) }

func testRedisThroughTheCLI(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	a.lw(t, "push", noopJob, "--connection", "redis")
	if l := a.list(t, "default"); len(l) != 1 || !strings.Contains(l[0], `"attempts":0`) {
		t.Fatalf("laraworker push left %q", l)
	}
	a.work(t, "--stop-when-empty")
	if runs := s.runs(t); len(runs) != 1 || runs[0].Worker != "php" || runs[0].Class != noopJob {
		t.Fatalf("PHP's run of Go's push: %+v; failed %+v; left %q", runs, s.failed(t), a.list(t, "default"))
	}

	a.artisan(t, "app:dispatch", "noop", "--count=3")
	if out := a.lw(t, "size"); !strings.Contains(out, "default") || !strings.Contains(out, "3") {
		t.Fatalf("size:\n%s", out)
	}
	a.lw(t, "work", "--sleep", "0.2", "--stop-when-empty", s.route(noopJob))
	if runs := s.runs(t); len(runs) != 4 || runs[3].Worker != "go" {
		t.Fatalf("runs after laraworker work: %+v", runs)
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Fatalf("left in Redis: %s", got)
	}

	s.reset(t)
	a.artisan(t, "app:dispatch", "noop")
	p, _ := payload.Parse([]byte(a.list(t, "default")[0]))
	a.lw(t, "work", "--sleep", "0.2", "--stop-when-empty", s.route(noopJob, "-fail", "no luck"))
	if out := a.lw(t, "failed"); !strings.Contains(out, p.UUID) {
		t.Fatalf("laraworker failed does not list the job:\n%s", out)
	}
	a.lw(t, "retry", p.UUID)
	if l := a.list(t, "default"); len(l) != 1 || !strings.Contains(l[0], `"attempts":0`) || len(s.failed(t)) != 0 {
		t.Fatalf("after laraworker retry: list %q, failed %d", l, len(s.failed(t)))
	}
	a.lw(t, "clear", "--force")
	if got := s.redisLeft(t, a); got != "" {
		t.Fatalf("left in Redis after clear: %s", got)
	}
}

// TestRedisHorizonRecordsThroughTheCLI: `work --horizon on` writes
// Horizon's records of the jobs it runs under Horizon's prefix (the
// app has no config/horizon.php: Horizon::use()'s "horizon:"): each job
// completed and out of the pending list, the queue's and the class's
// throughput counted.
func TestRedisHorizonRecordsThroughTheCLI(t *testing.T) {
	onEachDB(t, testRedisHorizonRecordsThroughTheCLI)
}

func testRedisHorizonRecordsThroughTheCLI(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	a.artisan(t, "app:dispatch", "noop", "--count=3")
	var uuids []string
	for _, raw := range a.list(t, "default") {
		p, err := payload.Parse([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		uuids = append(uuids, p.UUID)
	}
	a.goWork(t, noopJob, nil, "--stop-when-empty", "--horizon", "on")
	ctx := s.ctx(t)
	for _, u := range uuids {
		if st, _ := a.rc.HGet(ctx, "horizon:"+u, "status").Result(); st != "completed" {
			t.Errorf("job %s: Horizon status %q, want completed", u, st)
		}
		if _, err := a.rc.ZScore(ctx, "horizon:completed_jobs", u).Result(); err != nil {
			t.Errorf("job %s not in Horizon's completed_jobs: %v", u, err)
		}
	}
	for key, want := range map[string]string{"horizon:queue:default": "3", "horizon:job:" + noopJob: "3"} {
		if got, _ := a.rc.HGet(ctx, key, "throughput").Result(); got != want {
			t.Errorf("%s throughput %q, want %s", key, got, want)
		}
	}
	if ok, _ := a.rc.SIsMember(ctx, "horizon:measured_queues", "horizon:queue:default").Result(); !ok {
		t.Error("horizon:measured_queues lacks the queue")
	}
}
