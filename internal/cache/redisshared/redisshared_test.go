package redisshared

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/redis/go-redis/v9"
)

// machineRedis is the machine's Redis (6379), which these tests share
// with everything else on it: each test writes only keys under its own
// unique prefix and deletes them at the end (never a flush). No Redis
// skips the test, unless LARAWORKER_TEST_REQUIRE_DB is set.
func machineRedis(t *testing.T) (*redis.Client, string) {
	t.Helper()
	testdsn.NeedRedis(t)
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { rc.Close() })
	if err := rc.Ping(context.Background()).Err(); err != nil {
		if testdsn.Required() {
			t.Fatalf("Redis on 6379: %v", err)
		}
		t.Skipf("no Redis on 6379: %v", err)
	}
	prefix := fmt.Sprintf("laraworker_redisshared_%d_", time.Now().UnixNano())
	t.Cleanup(func() {
		ctx := context.Background()
		for _, db := range []int{0, 1} {
			c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", DB: db, Protocol: 2, DisableIdentity: true})
			if keys, _ := c.Keys(ctx, prefix+"*").Result(); len(keys) > 0 {
				c.Del(ctx, keys...)
			}
			c.Close()
		}
	})
	return rc, prefix
}

// laravelRedis is config('database.redis') as the Laravel 8 skeleton has
// it, on the machine's Redis, with prefix as options.prefix: "default" on
// database 0, "cache" on database 1.
func laravelRedis(prefix string) map[string]any {
	server := func(db string) map[string]any {
		return map[string]any{"url": nil, "host": "127.0.0.1", "password": nil, "port": "6379", "database": db}
	}
	return map[string]any{"client": "phpredis", "options": map[string]any{"cluster": "redis", "prefix": prefix},
		"default": server("0"), "cache": server("1")}
}

// TestOpenSharesTheRedisCacheStore: with the skeleton's redis store
// (values on "cache", locks on "default"), the pieces Open builds reach
// the keys PHP's RedisStore writes: the queue:restart stamp and the
// maxExceptions counters behind the connection prefix and the cache
// prefix with Laravel 8's ":", the unique locks on the lock connection,
// whole keys for the job middleware, and a DurationLimiter per connection.
func TestOpenSharesTheRedisCacheStore(t *testing.T) {
	rc, prefix := machineRedis(t)
	ctx := context.Background()
	db1 := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", DB: 1, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { db1.Close() })
	st, err := Open(App{Redis: laravelRedis(prefix), StoreName: "redis", CachePrefix: "laravel_cache", Version: "8.83.27",
		CacheStore: map[string]any{"driver": "redis", "connection": "cache", "lock_connection": "default"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	// `php artisan queue:restart` on Laravel 8: Cache::forever on the
	// "cache" connection (database 1), the number as its text.
	if err := db1.Set(ctx, prefix+"laravel_cache:illuminate:queue:restart", "1764600000", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if st.Cache == nil {
		t.Fatal("no shared cache for a redis store")
	}
	if v, ok, err := st.Cache.Get(ctx, "illuminate:queue:restart"); err != nil || !ok || string(v) != `s:10:"1764600000";` {
		t.Fatalf("the restart stamp: %q %v %v", v, ok, err)
	}
	if n, ok, err := st.Cache.Increment(ctx, "job-exceptions:uuid-1"); err != nil || !ok || n != 1 {
		t.Fatalf("increment: %d %v %v", n, ok, err)
	}
	if v, _ := db1.Get(ctx, prefix+"laravel_cache:job-exceptions:uuid-1").Result(); v != "1" {
		t.Errorf("the maxExceptions counter in database 1: %q", v)
	}

	// A unique job's lock as PHP's dispatch takes it, on the lock
	// connection (database 0).
	lockKey := prefix + `laravel_cache:laravel_unique_job:App\Jobs\UniqueJob1`
	if err := rc.Set(ctx, lockKey, "owner-1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	locks := st.Locks["redis"]
	if locks == nil || len(st.Locks) != 1 {
		t.Fatalf("lock stores %v", st.Locks)
	}
	if err := locks.ReleaseOwned(ctx, `laravel_unique_job:App\Jobs\UniqueJob1`, "another"); err != nil {
		t.Fatal(err)
	}
	if n, _ := rc.Exists(ctx, lockKey).Result(); n != 1 {
		t.Fatal("a release by another owner deleted the lock")
	}
	if err := locks.ReleaseOwned(ctx, `laravel_unique_job:App\Jobs\UniqueJob1`, "owner-1"); err != nil {
		t.Fatal(err)
	}
	if n, _ := rc.Exists(ctx, lockKey).Result(); n != 0 {
		t.Fatal("the owner's release left the lock")
	}

	// The job middleware's state: whole keys (the store prefix is the
	// caller's), values on "cache", locks on "default".
	state, ok := st.StateStores["redis"]
	if !ok || state.Driver != "redis" || state.Prefix != "laravel_cache:" || state.Cache == nil || state.Locks == nil {
		t.Fatalf("state store %+v", state)
	}
	if got, err := state.Locks.Acquire(ctx, "laravel_cache:overlap", "me", 10); err != nil || !got {
		t.Fatalf("acquire: %v %v", got, err)
	}
	if v, _ := rc.Get(ctx, prefix+"laravel_cache:overlap").Result(); v != "me" {
		t.Errorf("the overlap lock in database 0: %q", v)
	}
	if added, err := state.Cache.Add(ctx, "laravel_cache:limiter", []byte("i:0;"), time.Minute); err != nil || !added {
		t.Fatalf("add: %v %v", added, err)
	}
	if v, _ := db1.Get(ctx, prefix+"laravel_cache:limiter").Result(); v != "0" {
		t.Errorf("the limiter value in database 1: %q", v)
	}

	lim := st.DurationLimiters["default"]
	if lim == nil || st.DurationLimiters["cache"] == nil || len(st.DurationLimiters) != 2 {
		t.Fatalf("limiters %v", st.DurationLimiters)
	}
	if _, err := lim.Acquire(ctx, "window", 2, 60); err != nil {
		t.Fatal(err)
	}
	if n, _ := rc.HLen(ctx, prefix+"window").Result(); n != 3 {
		t.Errorf("the DurationLimiter hash on the default connection: %d fields", n)
	}
}

// TestOpenWithoutARedisStore: another default store gets no cache, locks
// or state, only the limiters; no Redis config opens nothing; a redis
// store needs the version, and its locks on a cluster are refused by
// name. Nothing dials.
func TestOpenWithoutARedisStore(t *testing.T) {
	redisConf := laravelRedis("p_")
	st, err := Open(App{Redis: redisConf, StoreName: "file", CacheStore: nil, Version: "10.48.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Cache != nil || len(st.Locks) != 0 || len(st.StateStores) != 0 || len(st.DurationLimiters) != 2 {
		t.Errorf("a file store: cache %v, locks %v, state %v, limiters %v", st.Cache, st.Locks, st.StateStores, st.DurationLimiters)
	}
	none, err := Open(App{CacheStore: map[string]any{"driver": "redis"}})
	if err != nil || none.Cache != nil || len(none.DurationLimiters) != 0 {
		t.Errorf("no redis config: %+v %v", none, err)
	}
	if _, err := Open(App{Redis: redisConf, StoreName: "redis", CacheStore: map[string]any{"driver": "redis"}}); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("no version: %v", err)
	}
	clustered := laravelRedis("p_")
	clustered["clusters"] = map[string]any{"locks": []any{map[string]any{"host": "127.0.0.1", "port": "7000"}}}
	_, err = Open(App{Redis: clustered, StoreName: "redis", Version: "10.48.0",
		CacheStore: map[string]any{"driver": "redis", "connection": "cache", "lock_connection": "locks"}})
	if err == nil || !strings.Contains(err.Error(), `the redis cache store takes its locks on the cluster "locks"`) {
		t.Errorf("locks on a cluster: %v", err)
	}
	_, err = Open(App{Redis: redisConf, StoreName: "redis", Version: "10.48.0",
		CacheStore: map[string]any{"driver": "redis", "connection": "missing"}})
	if err == nil || !strings.Contains(err.Error(), "the redis cache store") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("an unknown connection: %v", err)
	}
}
