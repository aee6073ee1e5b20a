package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/redis/go-redis/v9"
)

// The database queue of an app whose default cache store is redis
// (CACHE_DRIVER=redis, the common production setup): Go reaches the redis
// store as PHP does, so `php artisan queue:restart` stops it, unique locks
// PHP takes are released by Go, and job middleware keep one state across
// PHP and Go. The machine's Redis (6379) holds the app's keys under a
// REDIS_PREFIX of the test's own, deleted at the end (never a flush).

// unsharedCacheWarning is a phrase of the startup warning a worker gives
// when it cannot share the app's cache store.
const unsharedCacheWarning = "does not stop this worker"

// redisCacheEnv is the app's environment with its default cache in Redis
// under a prefix of the test's own, and clients on the skeleton's two
// Redis databases (0: "default", the locks; 1: "cache", the values).
func redisCacheEnv(t *testing.T, name string) (env []string, prefix string, dbs map[int]*redis.Client) {
	t.Helper()
	if !redisUp(t) {
		t.Skip("no Redis on 6379")
	}
	prefix = fmt.Sprintf("laraworker_e2e_%s_%d_", name, time.Now().UnixNano())
	t.Cleanup(func() { dropRedisKeys(prefix) })
	dbs = map[int]*redis.Client{}
	for _, db := range []int{0, 1} {
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", DB: db, Protocol: 2, DisableIdentity: true})
		t.Cleanup(func() { c.Close() })
		dbs[db] = c
	}
	return []string{"CACHE_DRIVER=redis", "REDIS_PREFIX=" + prefix}, prefix, dbs
}

// TestRedisCacheOnADatabaseQueue: a unique job's lock, taken in Redis by
// PHP's dispatch, is released by Go's run (the next dispatch is queued);
// the worker gives no warning about the cache store; `php artisan
// queue:restart`, which writes its stamp in Redis, makes it exit 0 with
// reason restart_signal.
func TestRedisCacheOnADatabaseQueue(t *testing.T) { onEachDB(t, testRedisCacheOnADatabaseQueue) }

func testRedisCacheOnADatabaseQueue(t *testing.T, s *suite) {
	env, prefix, dbs := redisCacheEnv(t, "dbrediscache")
	// Laravel 8's RedisStore: values on the "cache" connection (database
	// 1), locks on "default" (database 0).
	redisCacheOnADatabaseQueue(t, s, env, prefix, dbs[1], dbs[0])
}

// redisCacheOnADatabaseQueue is TestRedisCacheOnADatabaseQueue's scenario
// on the app's environment env, with Redis clients where the store's
// values and its locks are.
func redisCacheOnADatabaseQueue(t *testing.T, s *suite, env []string, prefix string, values, locks *redis.Client) {
	ctx := s.ctx(t)
	s.installHookConfig(t, false)
	artisan := func(args ...string) {
		t.Helper()
		cmd := s.phpCmd(args...)
		cmd.Env = append(cmd.Env, env...)
		s.run(t, cmd)
	}
	// Laravel 8's RedisStore: the cache prefix with ":".
	stampKey := prefix + "laravel_cache:illuminate:queue:restart"
	lockKey := prefix + `laravel_cache:laravel_unique_job:App\Jobs\UniqueJob1`
	artisan("queue:restart") // a stamp exists before the worker starts, as in a deployed app
	stamp, err := values.Get(ctx, stampKey).Int64()
	if err != nil {
		t.Fatalf("queue:restart wrote no stamp in Redis at %s: %v", stampKey, err)
	}
	artisan("app:dispatch", "unique")
	artisan("app:dispatch", "unique")
	if n, _ := locks.Exists(ctx, lockKey).Result(); n != 1 || len(s.jobsOn(t, "go")) != 1 {
		t.Fatalf("after two dispatches: lock %s exists %d, %d jobs on go; want the lock and one job", lockKey, n, len(s.jobsOn(t, "go")))
	}

	cmd := s.lwCmd("work", "--queue", "go", "--sleep", "0.1", s.route(`App\Jobs\UniqueJob`))
	cmd.Env = append(cmd.Env, env...)
	goWorker := s.start(t, cmd)
	testwait.Until(t, 30*time.Second, "Go to run the unique job and release its lock", func() bool {
		n, _ := locks.Exists(ctx, lockKey).Result()
		return n == 0 && len(s.jobsOn(t, "go")) == 0
	})
	if runs := runsOf(s.runs(t), `App\Jobs\UniqueJob`, "go"); len(runs) != 1 {
		t.Fatalf("Go ran %d UniqueJobs, want 1", len(runs))
	}
	// The lock is gone, so the next dispatch is queued: Go, still
	// running, runs it (counting the rows left instead raced with that
	// run: Go could take the job before the count). Had Go left the
	// lock, the dispatch would queue nothing and Go run nothing more.
	artisan("app:dispatch", "unique")
	testwait.Until(t, 30*time.Second, "Go to run the job dispatched after its run (a dispatch queued only if Go released the lock)", func() bool {
		return len(runsOf(s.runs(t), `App\Jobs\UniqueJob`, "go")) == 2
	})

	select {
	case err := <-goWorker.done:
		goWorker.done <- err
		t.Fatalf("the worker stopped before queue:restart: %v\n%s", err, tail(goWorker.stderr.String()))
	default:
	}
	// The stamp is Unix seconds: the next one differs once the clock has
	// passed the first one's second.
	testwait.Until(t, 5*time.Second, "the clock to pass the first stamp's second", func() bool { return time.Now().Unix() > stamp })
	artisan("queue:restart")
	goWorker.wait(t, 15*time.Second)
	log := goWorker.stderr.String()
	if !strings.Contains(log, `"reason":"restart_signal"`) {
		t.Fatalf("the worker did not say it stopped for queue:restart:\n%s", tail(log))
	}
	if strings.Contains(log, unsharedCacheWarning) {
		t.Errorf("the worker warned that it does not share the cache store:\n%s", tail(log))
	}
}

// TestMiddlewareStateInRedisOnADatabaseQueue: PodcastSyncJob
// (WithoutOverlapping by podcast, RateLimited 3 a minute per podcast),
// routed to Go by the bridge, with the redis cache store. An overlap lock
// held in Redis as a PHP worker holds it keeps Go off that podcast (its
// jobs released, not run) until it goes; Go's runs use the limiter budget
// in Redis, so PHP's next job of a podcast Go ran 3 times in the minute is
// released, not run.
func TestMiddlewareStateInRedisOnADatabaseQueue(t *testing.T) {
	onEachDB(t, testMiddlewareStateInRedisOnADatabaseQueue)
}

func testMiddlewareStateInRedisOnADatabaseQueue(t *testing.T, s *suite) {
	env, prefix, dbs := redisCacheEnv(t, "dbredismw")
	ctx := s.ctx(t)
	s.installBridgeConfig(t, middlewareRoutes)
	s.hooks(t, "podcast-sync", env...)
	podcastOf := map[string]int64{}
	for _, j := range s.jobs(t) {
		podcastOf[j.UUID] = jobPodcast(t, j)
	}
	if len(podcastOf) != 12 || len(s.jobsOn(t, "go")) != 6 {
		t.Fatalf("dispatched %d jobs, %d on go; want 12 and 6", len(podcastOf), len(s.jobsOn(t, "go")))
	}
	goWork := func() string {
		t.Helper()
		cmd := s.lwCmd("work", "--queue", "go", "--sleep", "0.1", "--concurrency", "1", "--stop-when-empty", s.route(podcastSyncClass, "-hold", "100ms"))
		cmd.Env = append(cmd.Env, env...)
		w := s.start(t, cmd)
		w.wait(t, cmdTimeout)
		return w.stderr.String()
	}
	goRuns := func() map[int64]int {
		t.Helper()
		out := map[int64]int{}
		for _, r := range runsOf(s.runs(t), podcastSyncClass, "") {
			if r.Worker != "go" {
				t.Fatalf("a %s run by %s", podcastSyncClass, r.Worker)
			}
			out[podcastOf[r.UUID]]++
		}
		return out
	}

	// PHP's WithoutOverlapping on Laravel 8: the lock store's lock
	// laravel-queue-overlap:<class>:<key> on the lock connection.
	overlapKey := prefix + `laravel_cache:laravel-queue-overlap:` + podcastSyncClass + `:1`
	if err := dbs[0].Set(ctx, overlapKey, "a-php-worker", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	log := goWork()
	if got := goRuns(); got[1] != 0 || got[2] != 3 {
		t.Fatalf("with podcast 1's overlap lock held: Go ran %v; want podcast 2's three jobs only\n%s", got, tail(log))
	}
	if n := len(s.jobsOn(t, "go")); n != 3 {
		t.Fatalf("%d jobs left on go; want podcast 1's three, released", n)
	}
	if v, _ := dbs[0].Get(ctx, overlapKey).Result(); v != "a-php-worker" {
		t.Fatalf("the overlap lock PHP holds became %q", v)
	}
	dbs[0].Del(ctx, overlapKey)
	s.makeAvailable(t)
	log += goWork()
	if got := goRuns(); got[1] != 3 || got[2] != 3 || len(s.jobsOn(t, "go")) != 0 {
		t.Fatalf("Go ran %v, %d jobs left on go; want 3 runs of each podcast\n%s", got, len(s.jobsOn(t, "go")), tail(log))
	}
	if keys, _ := dbs[0].Keys(ctx, prefix+"*laravel-queue-overlap*").Result(); len(keys) != 0 {
		t.Errorf("overlap locks left: %v", keys)
	}
	// RateLimited's hits, on the cache connection: one key and its timer
	// per podcast, at the limit.
	keys, _ := dbs[1].Keys(ctx, prefix+"laravel_cache:*:timer").Result()
	if len(keys) != 2 {
		t.Fatalf("limiter timers in Redis database 1: %v; want one per podcast", keys)
	}
	for _, k := range keys {
		if v, _ := dbs[1].Get(ctx, strings.TrimSuffix(k, ":timer")).Result(); v != "3" {
			t.Errorf("%s holds %q hits; want 3 (Go's runs)", strings.TrimSuffix(k, ":timer"), v)
		}
	}

	// PHP's worker sees the budget Go used: its job is released.
	before := len(s.runs(t))
	s.phpWorkEnv(t, env, "--once", "--queue=default")
	if n := len(s.runs(t)); n != before {
		t.Errorf("PHP ran a job of a podcast Go ran 3 times this minute (%d runs, were %d)", n, before)
	}
	held := 0
	for _, j := range s.jobsOn(t, "default") {
		// RateLimited releases for availableIn + 3: up to 63 s when
		// PHP runs in the window's first second.
		if d := j.AvailableAt - s.now(); d > 0 && d <= 63 {
			held++
		}
	}
	if held != 1 || len(s.failed(t)) != 0 {
		t.Errorf("%d of PHP's jobs held back until the window ends, failed %+v; want 1 and none", held, s.failed(t))
	}
	if strings.Contains(log, unsharedCacheWarning) || strings.Contains(log, "given back to PHP") {
		t.Errorf("the worker did not share the middleware state:\n%s", tail(log))
	}
}
