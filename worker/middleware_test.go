package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/cache/redislimiter"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/worker/internal/jobmiddleware"
)

// The job middleware as the worker applies them, on real databases: what
// a user would check in the jobs, cache and cache_locks tables and in the
// handler's runs.

const mwClass = `App\Jobs\Sync`

// mwConfig is a worker on the Laravel 8.83 app's database cache store.
func mwConfig(concurrency int) Config {
	cfg := testConfig()
	cfg.Concurrency, cfg.LaravelVersion, cfg.Tries = concurrency, "8.83", 10
	return cfg
}

// pushSync pushes an App\Jobs\Sync with podcastId, with the bridge's
// record of its middleware when meta is set.
func pushSync(t *testing.T, q *database.Queue, podcastID int64, meta *bridgeproto.Metadata) string {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(mwClass, phpserialize.Public("podcastId", phpserialize.Int(podcastID))), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if meta != nil {
		meta.V, meta.Laravel, meta.Class = 1, "8.83.26", mwClass
		m, err := json.Marshal(meta)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(append(raw[:len(raw)-1], `,"laraworker":`...), append(m, '}')...)
	}
	pushRaw(t, q, "default", raw)
	p, _ := payload.Parse(raw)
	return p.UUID
}

// recordedStores is the bridge's record of the app's database store as
// the test's queue has it.
func recordedStores(q *database.Queue) map[string]bridgeproto.Store {
	c := q.Config()
	return map[string]bridgeproto.Store{"database": {Driver: "database", Prefix: c.CachePrefix, Connection: "sqlite",
		Table: c.CacheTable, LockConnection: "sqlite", LockTable: c.CacheLockTable, LockTimeout: 86400}}
}

func int64p(n int64) *int64 { return &n }

// overlapRecord is WithoutOverlapping($podcastId)->releaseAfter(5) as the
// bridge records it.
func overlapRecord(q *database.Queue, podcastID int64) *bridgeproto.Metadata {
	key := fmt.Sprintf(`laravel-queue-overlap:%s:%d`, mwClass, podcastID)
	return &bridgeproto.Metadata{Stores: recordedStores(q), Middleware: []bridgeproto.Middleware{{
		Type: "WithoutOverlapping", Class: `Illuminate\Queue\Middleware\WithoutOverlapping`, Source: "method",
		Key: key, CacheKey: q.Config().CachePrefix + key, Store: "database", ReleaseAfter: int64p(5), ExpiresAfter: 120,
	}}}
}

// TestWithoutOverlappingKeepsOneJobPerKey: while a job of a key runs, a
// second job of that key is released after releaseAfter (its attempt
// used) without running, and one of another key runs; the lock is the key
// the bridge recorded (or the one 8.x computes for a registration), held
// while the handler runs and released after it, even when it fails.
func TestWithoutOverlappingKeepsOneJobPerKey(t *testing.T) {
	for _, from := range []string{"payload", "registration"} {
		t.Run(from, func(t *testing.T) {
			testdb.ForEachEngine(t, func(t *testing.T, engine string) {
				q := lockEnv(t, engine)
				g := newGate(t)
				var firstRun atomic.Bool
				var running, withoutLock atomic.Int64
				c := newCounter()
				reg := handlers.NewRegistry()
				var opts []handlers.Option
				if from == "registration" {
					opts = append(opts, handlers.WithoutOverlapping(handlers.KeyProperty("podcastId"), handlers.ReleaseAfter(5*time.Second), handlers.ExpireAfter(2*time.Minute)))
				}
				reg.HandleFunc(mwClass, func(ctx context.Context, job *handlers.Job) error {
					c.add(job)
					cmd, _ := job.Command()
					id, _ := cmd.Object.Prop("podcastId")
					if !lockHeld(t, q, fmt.Sprintf(`laravel-queue-overlap:%s:%d`, mwClass, id.Int)) {
						withoutLock.Add(1)
					}
					if id.Int == 7 && firstRun.CompareAndSwap(false, true) {
						running.Add(1)
						g.wait()
						return fmt.Errorf("the first run of 7 fails")
					}
					return nil
				}, opts...)
				meta := func(id int64) *bridgeproto.Metadata {
					if from == "payload" {
						return overlapRecord(q, id)
					}
					return nil
				}
				first := pushSync(t, q, 7, meta(7))
				w, _ := newTestWorker(t, q, reg, mwConfig(1), nil)
				run := startWorker(w, time.Minute)
				testwait.Until(t, 10*time.Second, "the first job to run", func() bool { return running.Load() == 1 })
				second := pushSync(t, q, 7, meta(7))
				other := pushSync(t, q, 8, meta(8))
				// A second worker claims both: the job of key 7 is released
				// without running, the one of key 8 runs.
				w2, _ := newTestWorker(t, q, reg, mwConfig(2), nil)
				runWorker(t, w2, time.Minute)
				if c.count(second) != 0 || c.count(other) != 1 {
					t.Errorf("runs: second of key 7 %d (want 0), key 8 %d (want 1)", c.count(second), c.count(other))
				}
				if !lockHeld(t, q, `laravel-queue-overlap:App\Jobs\Sync:7`) || lockHeld(t, q, `laravel-queue-overlap:App\Jobs\Sync:8`) {
					t.Errorf("while the first runs, locks %v", lockKeys(t, q))
				}
				// The first fails: its lock goes, it is released and runs
				// again (with the lock), and succeeds.
				g.open()
				run.wait(t)
				if c.count(first) != 2 || withoutLock.Load() != 0 {
					t.Errorf("the first ran %d times (want 2); %d runs without their lock", c.count(first), withoutLock.Load())
				}
				rows := jobRows(t, q)
				if len(rows) != 1 || !strings.Contains(rows[0].Payload, second) || rows[0].Attempts != 1 || rows[0].ReservedAt.Valid {
					t.Fatalf("jobs left %+v; want the second of key 7, released", rows)
				}
				within(t, "the released job's delay", rows[0].AvailableAt-time.Now().Unix(), 5, 2)
				if locks := lockKeys(t, q); len(locks) != 0 {
					t.Errorf("locks left: %v", locks)
				}
			})
		})
	}
}

// TestWithoutOverlappingDontReleaseCountsAsDone: a job that does not get
// the lock with dontRelease() is deleted without running and without a
// failure.
func TestWithoutOverlappingDontReleaseCountsAsDone(t *testing.T) {
	q := lockEnv(t, "sqlite")
	testdb.HoldLock(t, q, `laravel-queue-overlap:App\Jobs\Sync:7`, "someone-else", time.Minute)
	meta := overlapRecord(q, 7)
	meta.Middleware[0].ReleaseAfter, meta.Middleware[0].DontRelease = nil, true
	pushSync(t, q, 7, meta)
	c := newCounter()
	reg := handlers.NewRegistry()
	reg.HandleFunc(mwClass, func(ctx context.Context, job *handlers.Job) error { c.add(job); return nil })
	w, logs := newTestWorker(t, q, reg, mwConfig(1), nil)
	runWorker(t, w, 30*time.Second)
	if c.total() != 0 || len(jobRows(t, q)) != 0 || len(failedRows(t, q)) != 0 {
		t.Fatalf("runs %d, jobs %v, failed %v", c.total(), jobRows(t, q), failedRows(t, q))
	}
	mustContain(t, "log", logs.String(), reasonMiddlewareStopped)
	if owner, ok, _ := q.Locks().Owner(context.Background(), `laravel-queue-overlap:App\Jobs\Sync:7`); !ok || owner != "someone-else" {
		t.Errorf("the other owner's lock: %q %v", owner, ok)
	}
}

// limitRecord is RateLimited('podcasts') with Limit::perMinute(max)->by(podcastId).
func limitRecord(q *database.Queue, podcastID, max int64, release bool) *bridgeproto.Metadata {
	key := jobmiddleware.LimiterKey("podcasts", fmt.Sprint(podcastID))
	return &bridgeproto.Metadata{Stores: recordedStores(q), Middleware: []bridgeproto.Middleware{{
		Type: "RateLimited", Class: `Illuminate\Queue\Middleware\RateLimited`, Source: "method", Limiter: "podcasts",
		Registered: true, Release: release, Store: "database",
		Limits: []bridgeproto.Limit{{Key: key, CacheKey: q.Config().CachePrefix + key, MaxAttempts: max, DecaySeconds: 60}},
	}}}
}

// TestRateLimitedSharesOneBudget: of five jobs limited to three a minute,
// three run (their hits are the counter PHP reads) and two are released
// until the window ends (+3 s), whether the limit comes from the payload
// or the registration; a PHP worker's hits count in the same budget.
func TestRateLimitedSharesOneBudget(t *testing.T) {
	for _, from := range []string{"payload", "registration"} {
		t.Run(from, func(t *testing.T) {
			testdb.ForEachEngine(t, func(t *testing.T, engine string) {
				q := lockEnv(t, engine)
				c := newCounter()
				reg := handlers.NewRegistry()
				var opts []handlers.Option
				if from == "registration" {
					opts = append(opts, handlers.RateLimited("podcasts", func(cmd *payload.Command) ([]handlers.Limit, error) {
						id, err := handlers.KeyProperty("podcastId")(cmd)
						return []handlers.Limit{handlers.PerMinute(3).By(id)}, err
					}))
				}
				reg.HandleFunc(mwClass, func(ctx context.Context, job *handlers.Job) error { c.add(job); return nil }, opts...)
				// One hit a PHP worker took already.
				key := q.Config().CachePrefix + jobmiddleware.LimiterKey("podcasts", "7")
				st := q.StateStores()["database"]
				if _, err := (jobmiddleware.RateLimiter{Cache: st.Cache, Now: time.Now}).Hit(context.Background(), key, 60); err != nil {
					t.Fatal(err)
				}
				for range 4 {
					var meta *bridgeproto.Metadata
					if from == "payload" {
						meta = limitRecord(q, 7, 3, true)
					}
					pushSync(t, q, 7, meta)
				}
				w, _ := newTestWorker(t, q, reg, mwConfig(1), nil)
				runWorker(t, w, 30*time.Second)
				if c.total() != 2 {
					t.Errorf("%d jobs ran; want 2 (3 a minute, one taken by PHP)", c.total())
				}
				rows := jobRows(t, q)
				if len(rows) != 2 {
					t.Fatalf("jobs left %+v", rows)
				}
				for _, r := range rows {
					if r.Attempts != 1 || r.ReservedAt.Valid {
						t.Errorf("released job %+v", r)
					}
					within(t, "released until the window ends + 3 s", r.AvailableAt-time.Now().Unix(), 63, 3)
				}
				if v, ok, _ := st.Cache.Get(context.Background(), key); !ok || string(v) != "i:3;" {
					t.Errorf("the counter is %q (%v); want i:3;", v, ok)
				}
			})
		})
	}
}

// TestRateLimitedHoldsAtConcurrency: twelve jobs limited to three a
// minute, run eight at once: exactly three run. Laravel's RateLimited
// reads the count and then hits it; jobs checked at the same moment would
// all pass at two and run, so the worker checks and hits one key one job
// at a time.
func TestRateLimitedHoldsAtConcurrency(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		q := lockEnv(t, engine)
		c := newCounter()
		reg := handlers.NewRegistry()
		reg.HandleFunc(mwClass, func(ctx context.Context, job *handlers.Job) error { c.add(job); return nil })
		for range 12 {
			pushSync(t, q, 7, limitRecord(q, 7, 3, true))
		}
		w, _ := newTestWorker(t, q, reg, mwConfig(8), nil)
		runWorker(t, w, 30*time.Second)
		if c.total() != 3 {
			t.Errorf("%d jobs ran; want 3 (3 a minute)", c.total())
		}
		key := q.Config().CachePrefix + jobmiddleware.LimiterKey("podcasts", "7")
		if v, ok, _ := q.StateStores()["database"].Cache.Get(context.Background(), key); !ok || string(v) != "i:3;" {
			t.Errorf("the counter is %q (%v); want i:3;", v, ok)
		}
	})
}

// TestRateLimitedDontReleaseAndUnlimited: a limited job with dontRelease()
// is deleted as done; an unregistered or unlimited limiter lets the job
// run without touching the cache.
func TestRateLimitedDontReleaseAndUnlimited(t *testing.T) {
	q := lockEnv(t, "sqlite")
	c := newCounter()
	reg := handlers.NewRegistry()
	reg.HandleFunc(mwClass, func(ctx context.Context, job *handlers.Job) error { c.add(job); return nil })
	pushSync(t, q, 1, limitRecord(q, 1, 1, false))
	dropped := pushSync(t, q, 1, limitRecord(q, 1, 1, false))
	free := limitRecord(q, 2, 1, true)
	free.Middleware[0].Unlimited = true
	pushSync(t, q, 2, free)
	pushSync(t, q, 2, free)
	w, _ := newTestWorker(t, q, reg, mwConfig(1), nil)
	runWorker(t, w, 30*time.Second)
	if c.total() != 3 || c.count(dropped) != 0 || len(jobRows(t, q)) != 0 || len(failedRows(t, q)) != 0 {
		t.Fatalf("runs %d (dropped one %d), jobs %v, failed %v", c.total(), c.count(dropped), jobRows(t, q), failedRows(t, q))
	}
}

// throttleRecord is (new ThrottlesExceptions(2, 60))->by('feed')->backoff(1).
func throttleRecord(q *database.Queue) *bridgeproto.Metadata {
	key := "laravel_throttles_exceptions:feed"
	return &bridgeproto.Metadata{Stores: recordedStores(q), Middleware: []bridgeproto.Middleware{{
		Type: "ThrottlesExceptions", Class: `Illuminate\Queue\Middleware\ThrottlesExceptions`, Source: "method",
		Key: key, CacheKey: q.Config().CachePrefix + key, Store: "database", MaxAttempts: 2, DecaySeconds: 60, BackoffSeconds: 60,
		By: func() *string { s := "feed"; return &s }(),
	}}}
}

// TestThrottlesExceptionsSwallowsAndThrottles: an exception is swallowed
// (no failure, no maxExceptions count) and the job released after the
// backoff, counting a hit; once the hits reach the maximum, jobs of the
// key are released until the window ends without running; a success
// clears the count.
func TestThrottlesExceptionsSwallowsAndThrottles(t *testing.T) {
	for _, from := range []string{"payload", "registration"} {
		t.Run(from, func(t *testing.T) {
			q := lockEnv(t, "sqlite")
			var fail atomic.Bool
			fail.Store(true)
			c := newCounter()
			reg := handlers.NewRegistry()
			var opts []handlers.Option
			if from == "registration" {
				opts = append(opts, handlers.ThrottlesExceptions(2, time.Minute, handlers.By(handlers.KeyString("feed")), handlers.Backoff(time.Minute)))
			}
			reg.HandleFunc(mwClass, func(ctx context.Context, job *handlers.Job) error {
				c.add(job)
				if fail.Load() {
					return fmt.Errorf("feed is down")
				}
				return nil
			}, opts...)
			push := func() string {
				var meta *bridgeproto.Metadata
				if from == "payload" {
					meta = throttleRecord(q)
				}
				return pushSync(t, q, 1, meta)
			}
			for range 3 {
				push()
			}
			cfg := mwConfig(1)
			cfg.Tries = 1 // a swallowed exception is no failure, even on the last try
			w, _ := newTestWorker(t, q, reg, cfg, nil)
			runWorker(t, w, 30*time.Second)
			key := q.Config().CachePrefix + "laravel_throttles_exceptions:feed"
			st := q.StateStores()["database"]
			if c.total() != 2 || len(failedRows(t, q)) != 0 {
				t.Fatalf("runs %d, failed %v; want 2 runs, no failure", c.total(), failedRows(t, q))
			}
			for _, r := range jobRows(t, q) {
				within(t, "released (backoff 60 s, or the window's end + 3 s)", r.AvailableAt-time.Now().Unix(), 61, 3)
			}
			if v, _, _ := st.Cache.Get(context.Background(), key); string(v) != "i:2;" {
				t.Errorf("hits %q; want i:2;", v)
			}
			// After the window, a success clears the count.
			exec(t, q, fmt.Sprintf("delete from %s", q.Config().CacheTable))
			exec(t, q, fmt.Sprintf("delete from %s", q.Config().JobsTable))
			fail.Store(false)
			push()
			w, _ = newTestWorker(t, q, reg, mwConfig(1), nil)
			rl := jobmiddleware.RateLimiter{Cache: st.Cache, Now: time.Now}
			if _, err := rl.Hit(context.Background(), key, 60); err != nil {
				t.Fatal(err)
			}
			runWorker(t, w, 30*time.Second)
			if _, ok, _ := st.Cache.Get(context.Background(), key); ok {
				t.Error("a success did not clear the exceptions' count")
			}
			if _, ok, _ := st.Cache.Get(context.Background(), key+":timer"); ok {
				t.Error("a success did not clear the exceptions' timer")
			}
		})
	}
}

// TestMiddlewareGoCannotApplyGoesBackToPHP: a job whose middleware is PHP
// code, or keeps its state in a store Go cannot reach, is given back
// untouched (not run, attempt restored), the class is reported by Health
// and not claimed for a while; a class listed in RunWithoutPHPMiddleware
// runs, the rest of its middleware applied and the skipped part logged.
func TestMiddlewareGoCannotApplyGoesBackToPHP(t *testing.T) {
	q := lockEnv(t, "sqlite")
	custom := overlapRecord(q, 1)
	custom.Middleware = append(custom.Middleware, bridgeproto.Middleware{Type: "other", Class: `App\Jobs\Middleware\CountsRuns`, Reason: "custom middleware"})
	custom.NotCarried = []string{`App\Jobs\Middleware\CountsRuns`}
	file := limitRecord(q, 1, 5, true)
	file.Middleware[0].Store = "file"
	file.Stores["file"] = bridgeproto.Store{Driver: "file"}
	for name, meta := range map[string]*bridgeproto.Metadata{"custom": custom, "file store": file} {
		t.Run(name, func(t *testing.T) {
			exec(t, q, fmt.Sprintf("delete from %s", q.Config().JobsTable))
			pushSync(t, q, 1, meta)
			c := newCounter()
			reg := handlers.NewRegistry()
			reg.HandleFunc(mwClass, func(ctx context.Context, job *handlers.Job) error { c.add(job); return nil })
			w, logs := newTestWorker(t, q, reg, mwConfig(1), nil)
			runWorker(t, w, 30*time.Second)
			rows := jobRows(t, q)
			if c.total() != 0 || len(rows) != 1 || rows[0].Attempts != 0 || rows[0].ReservedAt.Valid {
				t.Fatalf("runs %d, jobs %+v", c.total(), rows)
			}
			if err := w.Health(); err == nil || !strings.Contains(err.Error(), "middleware") {
				t.Errorf("Health: %v", err)
			}
			mustContain(t, "log", logs.String(), "given back to PHP", `Jobs\\Sync`)
			if name == "custom" {
				mustContain(t, "log", logs.String(), `CountsRuns`)
			} else {
				mustContain(t, "log", logs.String(), `\"file\" cache store (driver file)`)
			}

			cfg := mwConfig(1)
			cfg.RunWithoutPHPMiddleware = []string{mwClass}
			w, logs = newTestWorker(t, q, reg, cfg, nil)
			runWorker(t, w, 30*time.Second)
			if c.total() != 1 || len(jobRows(t, q)) != 0 {
				t.Fatalf("opted in: runs %d, jobs %+v", c.total(), jobRows(t, q))
			}
			mustContain(t, "log", logs.String(), "without the middleware Go cannot apply")
		})
	}
}

// TestSkipAndReleaseRecords: Skip (decided at dispatch) deletes the job as
// done without running it; Release releases it.
func TestSkipAndReleaseRecords(t *testing.T) {
	q := lockEnv(t, "sqlite")
	c := newCounter()
	reg := handlers.NewRegistry()
	reg.HandleFunc(mwClass, func(ctx context.Context, job *handlers.Job) error { c.add(job); return nil })
	pushSync(t, q, 1, &bridgeproto.Metadata{Middleware: []bridgeproto.Middleware{{Type: "Skip", Skip: true}}})
	runs := pushSync(t, q, 2, &bridgeproto.Metadata{Middleware: []bridgeproto.Middleware{{Type: "Skip", Skip: false}}})
	pushSync(t, q, 3, &bridgeproto.Metadata{Middleware: []bridgeproto.Middleware{{Type: "Release", Release: true, ReleaseAfter: int64p(30)}}})
	w, _ := newTestWorker(t, q, reg, mwConfig(1), nil)
	runWorker(t, w, 30*time.Second)
	rows := jobRows(t, q)
	if c.total() != 1 || c.count(runs) != 1 || len(rows) != 1 || len(failedRows(t, q)) != 0 {
		t.Fatalf("runs %d, jobs %+v", c.total(), rows)
	}
	within(t, "Release's delay", rows[0].AvailableAt-time.Now().Unix(), 30, 2)
}

// TestRedisLimitersShareOneWindow: RateLimitedWithRedis and
// ThrottlesExceptionsWithRedis keep their windows in a DurationLimiter
// hash on the Redis connection, as PHP's do.
func TestRedisLimitersShareOneWindow(t *testing.T) {
	srv := testredis.Start(t)
	rc := srv.Client(t)
	lim := redislimiter.New(rc, "app_database_", nil)
	q := lockEnv(t, "sqlite")
	c := newCounter()
	reg := handlers.NewRegistry()
	reg.HandleFunc(mwClass, func(ctx context.Context, job *handlers.Job) error {
		c.add(job)
		if strings.Contains(string(job.Payload.Raw), "ThrottlesExceptionsWithRedis") {
			return fmt.Errorf("down")
		}
		return nil
	})
	key := jobmiddleware.LimiterKey("podcasts", "9")
	limited := &bridgeproto.Metadata{Middleware: []bridgeproto.Middleware{{
		Type: "RateLimitedWithRedis", Limiter: "podcasts", Registered: true, Release: true, RedisConnection: "default",
		Limits: []bridgeproto.Limit{{Key: key, MaxAttempts: 2, DecaySeconds: 60}},
	}}}
	for range 3 {
		pushSync(t, q, 9, limited)
	}
	throttled := &bridgeproto.Metadata{Middleware: []bridgeproto.Middleware{{
		Type: "ThrottlesExceptionsWithRedis", Key: "laravel_throttles_exceptions:redis-feed", RedisConnection: "default",
		MaxAttempts: 1, DecaySeconds: 60,
	}}}
	for range 2 {
		pushSync(t, q, 10, throttled)
	}
	cfg := mwConfig(1)
	cfg.DurationLimiters = map[string]jobqueue.DurationLimiter{"default": lim}
	w, _ := newTestWorker(t, q, reg, cfg, nil)
	runWorker(t, w, 30*time.Second)
	if c.total() != 3 {
		t.Errorf("%d runs; want 2 limited ones and 1 throttled one", c.total())
	}
	h, err := rc.HGetAll(context.Background(), "app_database_"+key).Result()
	if err != nil || h["count"] != "3" {
		t.Errorf("the limiter's hash %v (%v); want count 3", h, err)
	}
	h, _ = rc.HGetAll(context.Background(), "app_database_laravel_throttles_exceptions:redis-feed").Result()
	if h["count"] != "1" {
		t.Errorf("the exceptions' hash %v; want count 1", h)
	}
	var released int
	for _, r := range jobRows(t, q) {
		released++
		within(t, "released until the window ends", r.AvailableAt-time.Now().Unix(), 61, 4)
	}
	if released != 3 {
		t.Errorf("%d jobs released; want 3", released)
	}
}

// TestDeclaredMiddlewareNeedsTheirStores: a registration's middleware
// whose store the worker does not reach, or without the app's Laravel
// version, stops New with a message naming them.
func TestDeclaredMiddlewareNeedsTheirStores(t *testing.T) {
	q := lockEnv(t, "sqlite")
	for _, c := range []struct {
		opt     handlers.Option
		version string
		want    string
	}{
		{handlers.WithoutOverlapping(handlers.KeyString("x")), "", "LaravelVersion"},
		{handlers.RateLimitedWithRedis("l", func(*payload.Command) ([]handlers.Limit, error) { return nil, nil }), "8.83", `redis connection "default"`},
		{handlers.WithoutOverlapping(handlers.KeyString("x"), handlers.Shared()), "8.83", "9.32"},
	} {
		reg := handlers.NewRegistry()
		reg.HandleFunc(mwClass, func(context.Context, *handlers.Job) error { return nil }, c.opt)
		cfg := mwConfig(1)
		cfg.LaravelVersion = c.version
		_, err := New(q, reg, cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: %v; want an error naming %q", err, c.want)
		}
	}
}

// lockKeys lists the cache_locks keys.
func lockKeys(t *testing.T, q *database.Queue) []string {
	t.Helper()
	d := q.Dialect()
	rows, err := q.DB().Query(fmt.Sprintf("select %s from %s", d.Quote("key"), d.Quote(q.Config().CacheLockTable)))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestUntilProcessingLockAroundMiddleware: a ShouldBeUniqueUntilProcessing
// job's lock goes before the middleware on 8.x-11.39, just before the
// handler from 11.40 (a job a middleware released keeps it), and from
// 12.21 also when a middleware stopped the job without releasing it.
func TestUntilProcessingLockAroundMiddleware(t *testing.T) {
	const (
		class      = `App\Jobs\UniqueJob`
		uniqueKey  = `laravel_unique_job:App\Jobs\UniqueJob:7`
		overlapKey = `laravel-queue-overlap:App\Jobs\UniqueJob:x`
	)
	for _, c := range []struct {
		version     string
		dontRelease bool
		released    bool // the unique lock after the run
	}{
		{"11.39", false, true},
		{"11.40", false, false},
		{"12.20", true, false},
		{"12.21", true, true},
		{"12.21", false, false},
	} {
		t.Run(fmt.Sprintf("%s dontRelease %v", c.version, c.dontRelease), func(t *testing.T) {
			q := lockEnv(t, "sqlite")
			testdb.HoldLock(t, q, uniqueKey, "dispatch", time.Hour)
			testdb.HoldLock(t, q, overlapKey, "another-job", time.Hour)
			push(t, q, "default", class, phpserialize.Public("productId", phpserialize.Int(7)))
			opts := []handlers.MiddlewareOption{}
			if c.dontRelease {
				opts = append(opts, handlers.DontRelease())
			}
			reg := handlers.NewRegistry()
			ran := newCounter()
			reg.HandleFunc(class, func(_ context.Context, j *handlers.Job) error { ran.add(j); return nil },
				handlers.ShouldBeUniqueUntilProcessing(handlers.UniqueIDProperty("productId")),
				handlers.WithoutOverlapping(handlers.KeyString("x"), opts...))
			cfg := mwConfig(1)
			cfg.LaravelVersion = c.version
			w, _ := newTestWorker(t, q, reg, cfg, nil)
			runWorker(t, w, 30*time.Second)
			if ran.total() != 0 {
				t.Fatal("the job ran without the overlap lock")
			}
			if held := lockHeld(t, q, uniqueKey); held == c.released {
				t.Errorf("unique lock held after the run: %v; want %v", held, !c.released)
			}
		})
	}
}

// TestOverlapLockKeptWhileAnAbandonedHandlerRuns: a handler that ignores
// its timeout's cancellation still runs after the job is decided; its
// overlap lock stays (until it expires) so no other job of the key runs
// beside it. A handler that returns at its timeout gives the lock back.
func TestOverlapLockKeptWhileAnAbandonedHandlerRuns(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	for _, ignores := range []bool{true, false} {
		t.Run(fmt.Sprintf("ignores cancellation %v", ignores), func(t *testing.T) {
			q := lockEnv(t, "sqlite")
			g := newGate(t)
			reg := handlers.NewRegistry()
			reg.HandleFunc(mwClass, func(ctx context.Context, job *handlers.Job) error {
				if ignores {
					g.wait()
					return nil
				}
				<-ctx.Done()
				return ctx.Err()
			}, handlers.WithoutOverlapping(handlers.KeyProperty("podcastId"), handlers.ExpireAfter(time.Minute)))
			pushSync(t, q, 7, nil)
			cfg := mwConfig(1)
			cfg.Once, cfg.Timeout, cfg.Abandon = true, 300*time.Millisecond, 200*time.Millisecond
			w, _ := newTestWorker(t, q, reg, cfg, nil)
			runWorker(t, w, 30*time.Second)
			if held := lockHeld(t, q, `laravel-queue-overlap:App\Jobs\Sync:7`); held != ignores {
				t.Errorf("lock held after the timeout: %v; want %v", held, ignores)
			}
			g.open()
		})
	}
}
