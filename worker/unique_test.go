package worker

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/cache/redislock"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/redis/go-redis/v9"
)

// fixture1267 reads a payload a real Laravel 12.67 app wrote.
func fixture1267(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile("../testdata/laravel-12.67/payloads/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// uniqueFixtureKey is the lock the 12.67 unique.json payload names (its
// hidden context), as UniqueJob(productId: 1) acquired it.
const uniqueFixtureKey = `laravel_unique_job:App\Jobs\UniqueJob:1`

// lockEnv is a queue with a database cache store's lock table.
func lockEnv(t *testing.T, engine string) *database.Queue {
	t.Helper()
	q := testdb.Open(t, testdb.WithLocks(t, testdb.Config(t, engine)))
	testdb.CreateCacheTable(t, q)
	testdb.CreateLockTable(t, q)
	return q
}

func lockHeld(t *testing.T, q *database.Queue, name string) bool {
	t.Helper()
	_, ok, err := q.Locks().Owner(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestUniqueLockReleasedAsCallQueuedHandler: the lock of a ShouldBeUnique
// job goes when the job is done or has failed, and stays while it is
// released, on a 12.67 payload (key from the context) and on 8.x/11.x
// payloads (key from the registration's uniqueId), on every engine.
func TestUniqueLockReleasedAsCallQueuedHandler(t *testing.T) {
	legacy := func(version string) func(t *testing.T, q *database.Queue) {
		return func(t *testing.T, q *database.Queue) {
			raw, err := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\UniqueJob`,
				phpserialize.Public("productId", phpserialize.Int(7))), payload.BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pushRaw(t, q, "default", raw)
		}
	}
	fixture := func(t *testing.T, q *database.Queue) { pushRaw(t, q, "default", fixture1267(t, "unique.json")) }
	cases := []struct {
		name    string
		version string
		push    func(t *testing.T, q *database.Queue)
		key     string
		handler func(ctx context.Context, job *handlers.Job) error
		held    bool // after the run
	}{
		{"12.67 done", "", fixture, uniqueFixtureKey, okHandler, false},
		{"12.67 failed", "", fixture, uniqueFixtureKey, failHandler, false},
		{"12.67 failed by the handler", "", fixture, uniqueFixtureKey, func(_ context.Context, j *handlers.Job) error { j.Fail(nil); return nil }, false},
		{"12.67 deleted by the handler", "", fixture, uniqueFixtureKey, func(_ context.Context, j *handlers.Job) error { j.Delete(); return nil }, false},
		{"12.67 released", "", fixture, uniqueFixtureKey, func(_ context.Context, j *handlers.Job) error { j.Release(time.Hour); return nil }, true},
		{"8.83 done", "8.83", legacy("8.83"), `laravel_unique_job:App\Jobs\UniqueJob7`, okHandler, false},
		{"10.48 failed", "10.48", legacy("10.48"), `laravel_unique_job:App\Jobs\UniqueJob7`, failHandler, false},
		{"11.38 done", "11.38", legacy("11.38"), `laravel_unique_job:App\Jobs\UniqueJob:7`, okHandler, false},
		{"11.38 released", "11.38", legacy("11.38"), `laravel_unique_job:App\Jobs\UniqueJob:7`, func(_ context.Context, j *handlers.Job) error { j.Release(time.Hour); return nil }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testdb.ForEachEngine(t, func(t *testing.T, engine string) {
				q := lockEnv(t, engine)
				testdb.HoldLock(t, q, c.key, "php-owner", time.Hour)
				testdb.HoldLock(t, q, c.key+"-other", "php-owner", time.Hour)
				c.push(t, q)
				reg := handlers.NewRegistry()
				reg.HandleFunc(`App\Jobs\UniqueJob`, c.handler, handlers.ShouldBeUnique(handlers.UniqueIDProperty("productId")))
				cfg := testConfig()
				cfg.LaravelVersion = orDefaultVersion(c.version)
				w, logs := newTestWorker(t, q, reg, cfg, nil)
				runWorker(t, w, 30*time.Second)
				if got := lockHeld(t, q, c.key); got != c.held {
					t.Errorf("lock %s held = %v after the run, want %v\n%s", c.key, got, c.held, logs)
				}
				if !lockHeld(t, q, c.key+"-other") {
					t.Error("another job's lock was released")
				}
			})
		})
	}
}

func orDefaultVersion(v string) string {
	if v == "" {
		return "12.67"
	}
	return v
}

func okHandler(context.Context, *handlers.Job) error { return nil }

func failHandler(context.Context, *handlers.Job) error { return errors.New("boom") }

// TestUniqueUntilProcessingReleasesBeforeTheHandler: the handler already
// sees the lock gone, and a failure afterwards releases nothing more.
func TestUniqueUntilProcessingReleasesBeforeTheHandler(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		q := lockEnv(t, engine)
		testdb.HoldLock(t, q, uniqueFixtureKey, "php-owner", time.Hour)
		pushRaw(t, q, "default", fixture1267(t, "unique.json"))
		var heldDuringRun atomic.Bool
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\UniqueJob`, func(ctx context.Context, job *handlers.Job) error {
			_, held, err := q.Locks().Owner(ctx, uniqueFixtureKey)
			heldDuringRun.Store(held || err != nil)
			// A new dispatch (PHP acquiring the lock again) while it runs.
			testdb.HoldLock(t, q, uniqueFixtureKey, "next-dispatch", time.Hour)
			return errors.New("boom")
		}, handlers.ShouldBeUniqueUntilProcessing(nil))
		cfg := testConfig()
		cfg.LaravelVersion = "12.67"
		w, _ := newTestWorker(t, q, reg, cfg, nil)
		runWorker(t, w, 30*time.Second)
		if heldDuringRun.Load() {
			t.Error("the lock was still held while the handler ran")
		}
		if owner, ok, _ := q.Locks().Owner(context.Background(), uniqueFixtureKey); !ok || owner != "next-dispatch" {
			t.Errorf("the next dispatch's lock = %q, %v; the failure must not release it", owner, ok)
		}
		if n := len(failedRows(t, q)); n != 1 {
			t.Errorf("%d failed jobs, want 1", n)
		}
	})
}

// TestInheritedUniqueContextIsNotReleased: a job dispatched while a unique
// job ran carries that job's hidden context; its lock is not this job's.
func TestInheritedUniqueContextIsNotReleased(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		q := lockEnv(t, engine)
		testdb.HoldLock(t, q, uniqueFixtureKey, "php-owner", time.Hour)
		raw := strings.ReplaceAll(string(fixture1267(t, "unique.json")), `"displayName":"App\\Jobs\\UniqueJob"`, `"displayName":"App\\Jobs\\NoopJob"`)
		raw = strings.ReplaceAll(raw, `"commandName":"App\\Jobs\\UniqueJob"`, `"commandName":"App\\Jobs\\NoopJob"`)
		raw = strings.ReplaceAll(raw, `O:18:\"App\\Jobs\\UniqueJob\":1:{s:9:\"productId\";i:1;}`, `O:16:\"App\\Jobs\\NoopJob\":0:{}`)
		pushRaw(t, q, "default", []byte(raw))
		reg := handlers.NewRegistry()
		ran := newCounter()
		reg.HandleFunc(`App\Jobs\NoopJob`, func(_ context.Context, j *handlers.Job) error { ran.add(j); return nil })
		w, _ := newTestWorker(t, q, reg, testConfig(), nil)
		runWorker(t, w, 30*time.Second)
		if ran.total() != 1 {
			t.Fatalf("the job ran %d times", ran.total())
		}
		if !lockHeld(t, q, uniqueFixtureKey) {
			t.Error("the inherited lock of another job was released")
		}
	})
}

// TestUniqueLockOwner13: Laravel 13.24+ releases by owner: a lock another
// dispatch owns now stays.
func TestUniqueLockOwner13(t *testing.T) {
	withOwner := func(owner string) []byte {
		raw := string(fixture1267(t, "unique.json"))
		return []byte(strings.Replace(raw, `"hidden":{`, `"hidden":{"laravel_unique_job_lock_owner":"s:`+strconv.Itoa(len(owner))+`:\"`+owner+`\";",`, 1))
	}
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		for _, c := range []struct {
			lockOwner string
			held      bool
		}{{"owner-of-this-job", false}, {"owner-of-a-later-dispatch", true}} {
			q := lockEnv(t, engine)
			testdb.HoldLock(t, q, uniqueFixtureKey, c.lockOwner, time.Hour)
			pushRaw(t, q, "default", withOwner("owner-of-this-job"))
			reg := handlers.NewRegistry()
			reg.HandleFunc(`App\Jobs\UniqueJob`, okHandler)
			w, _ := newTestWorker(t, q, reg, testConfig(), nil)
			runWorker(t, w, 30*time.Second)
			if got := lockHeld(t, q, uniqueFixtureKey); got != c.held {
				t.Errorf("lock owned by %s: held = %v, want %v", c.lockOwner, got, c.held)
			}
		}
	})
}

// TestUnreachableUniqueStoreIsNamedOnce: a unique class whose store Go
// cannot reach is named at startup, once.
func TestUnreachableUniqueStoreIsNamedOnce(t *testing.T) {
	q := lockEnv(t, appconfig.EngineSQLite)
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\UniqueJob`, okHandler, handlers.ShouldBeUnique(nil), handlers.UniqueVia("memcached"))
	reg.HandleFunc(`App\Jobs\OnDatabase`, okHandler, handlers.ShouldBeUnique(nil))
	cfg := testConfig()
	cfg.LaravelVersion = "10.48"
	w, logs := newTestWorker(t, q, reg, cfg, nil)
	pushRaw(t, q, "default", mustBuild(t, `App\Jobs\UniqueJob`))
	pushRaw(t, q, "default", mustBuild(t, `App\Jobs\UniqueJob`))
	runWorker(t, w, 30*time.Second)
	if n := strings.Count(logs.String(), "cache store Go cannot reach"); n != 1 {
		t.Errorf("the unreachable store was named %d times, want once:\n%s", n, logs)
	}
	mustContain(t, "log", logs.String(), `"class":"App\\Jobs\\UniqueJob"`, `"cache_store":"memcached"`)
	if strings.Contains(logs.String(), "OnDatabase") {
		t.Errorf("a class on the database store was named:\n%s", logs)
	}
}

// TestUniqueClassNeedsTheLaravelVersion: the key's form depends on it.
func TestUniqueClassNeedsTheLaravelVersion(t *testing.T) {
	q := lockEnv(t, appconfig.EngineSQLite)
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\UniqueJob`, okHandler, handlers.ShouldBeUnique(nil))
	_, err := New(q, reg, testConfig())
	if err == nil || !strings.Contains(err.Error(), "LaravelVersion") || !strings.Contains(err.Error(), `App\Jobs\UniqueJob`) {
		t.Fatalf("New = %v, want an error naming the class and LaravelVersion", err)
	}
}

func mustBuild(t *testing.T, class string, props ...phpserialize.Entry) []byte {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(class, props...), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestUniqueLockOnRedis: a 12.67 job whose lock lives in the redis store
// (its context names "redis") has it released there, under the
// connection and cache prefixes; nothing else is touched.
func TestUniqueLockOnRedis(t *testing.T) {
	testdsn.NeedRedis(t)
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", Protocol: 2, DisableIdentity: true})
	defer client.Close()
	ctx := context.Background()
	if err := client.Ping(ctx).Err(); err != nil {
		if testdsn.Required() {
			t.Fatalf("no Redis: %v", err)
		}
		t.Skipf("no Redis: %v", err)
	}
	prefix := "laraworker_test_worker_" + strconv.FormatInt(time.Now().UnixNano(), 36) + "_laravel_cache_"
	t.Cleanup(func() {
		if keys, _ := client.Keys(ctx, prefix+"*").Result(); len(keys) > 0 {
			client.Del(ctx, keys...)
		}
	})
	client.Set(ctx, prefix+uniqueFixtureKey, "php-owner", time.Minute)
	client.Set(ctx, prefix+uniqueFixtureKey+"0", "php-owner", time.Minute)
	q := lockEnv(t, appconfig.EngineSQLite)
	raw := strings.Replace(string(fixture1267(t, "unique.json")), `s:8:\"database\";`, `s:5:\"redis\";`, 1)
	pushRaw(t, q, "default", []byte(raw))
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\UniqueJob`, okHandler)
	cfg := testConfig()
	cfg.Locks = map[string]jobqueue.LockStore{"redis": redislock.NewWithClient(client, prefix)}
	w, logs := newTestWorker(t, q, reg, cfg, nil)
	runWorker(t, w, 30*time.Second)
	if n, _ := client.Exists(ctx, prefix+uniqueFixtureKey).Result(); n != 0 {
		t.Errorf("the Redis lock is still there\n%s", logs)
	}
	if n, _ := client.Exists(ctx, prefix+uniqueFixtureKey+"0").Result(); n != 1 {
		t.Error("another Redis lock was deleted")
	}
}
