package redis

import (
	"context"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/redis/go-redis/v9"
)

// TestOpenReachesTheMiddlewareState: a store opened from the app's config
// gives the job middleware the redis cache store (values on its
// connection, locks on its lock connection, whole keys behind the client
// prefix) and a DurationLimiter per Redis connection, beside the database
// store.
func TestOpenReachesTheMiddlewareState(t *testing.T) {
	srv := testredis.Start(t)
	cfg := testdb.Config(t, appconfig.EngineSQLite)
	cfg.ConnectionName, cfg.CacheStore, cfg.CachePrefix = "redis", "redis", "laravel_cache"
	server := func(db string) map[string]any {
		return map[string]any{"host": "127.0.0.1", "port": float64(srv.Port), "database": db}
	}
	ctx := context.Background()
	st, err := Open(ctx, App{
		Connection: "redis", Version: "8.83", CacheStoreName: cfg.CacheStore, CachePrefix: cfg.CachePrefix,
		Queue:      map[string]any{"driver": "redis", "connection": "default", "queue": "default", "retry_after": float64(90)},
		Redis:      map[string]any{"client": "phpredis", "options": map[string]any{"prefix": "app_"}, "default": server("0"), "cache": server("1")},
		CacheStore: map[string]any{"driver": "redis", "connection": "cache", "lock_connection": "default"},
	}, OpenOptions{Repository: repository(t, cfg)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	stores := st.StateStores()
	r, ok := stores["redis"]
	if !ok || r.Driver != "redis" || r.Prefix != "laravel_cache:" || r.Cache == nil || r.Locks == nil {
		t.Fatalf("redis state store %+v", r)
	}
	if _, ok := stores["database"]; !ok {
		t.Fatal("no database state store")
	}
	if got, err := r.Locks.Acquire(ctx, "laravel_cache:lock", "owner", 10); err != nil || !got {
		t.Fatalf("acquire: %v %v", got, err)
	}
	if added, err := r.Cache.Add(ctx, "laravel_cache:counter", []byte("i:0;"), time.Minute); err != nil || !added {
		t.Fatalf("add: %v %v", added, err)
	}
	lim, ok := st.DurationLimiters()["default"]
	if !ok || st.DurationLimiters()["cache"] == nil {
		t.Fatalf("limiters %v", st.DurationLimiters())
	}
	if _, err := lim.Acquire(ctx, "window", 2, 60); err != nil {
		t.Fatal(err)
	}
	db0 := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 0})
	db1 := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 1})
	t.Cleanup(func() { db0.Close(); db1.Close() })
	if v, _ := db0.Get(ctx, "app_laravel_cache:lock").Result(); v != "owner" {
		t.Errorf("the lock on the lock connection (db 0): %q", v)
	}
	if v, _ := db1.Get(ctx, "app_laravel_cache:counter").Result(); v != "0" {
		t.Errorf("the counter on the cache connection (db 1): %q", v)
	}
	if n, _ := db0.HLen(ctx, "app_window").Result(); n != 3 {
		t.Errorf("the DurationLimiter hash on the default connection: %d fields", n)
	}
}

// TestOpenThroughSentinel: an app whose Redis connections go through
// Redis Sentinel (predis): the queue, the redis cache store's values and
// locks, the DurationLimiter and Horizon's records all land on the master
// the sentinel names, none on 127.0.0.1:6379.
func TestOpenThroughSentinel(t *testing.T) {
	master := testredis.Start(t)
	sentinel := testredis.StartSentinel(t, "lwmaster", master, testredis.SentinelOptions{})
	cfg := testdb.Config(t, appconfig.EngineSQLite)
	cfg.ConnectionName, cfg.CacheStore, cfg.CachePrefix = "redis", "redis", "laravel_cache"
	list := func(db string) map[string]any {
		return map[string]any{"0": "tcp://" + sentinel.Addr, "options": map[string]any{
			"replication": "sentinel", "service": "lwmaster", "parameters": map[string]any{"database": db}}}
	}
	ctx := context.Background()
	st, err := Open(ctx, App{
		Connection: "redis", Version: "8.83", CacheStoreName: cfg.CacheStore, CachePrefix: cfg.CachePrefix, Horizon: true, HorizonConfig: map[string]any{"use": "default", "prefix": "app_horizon:"},
		Queue:      map[string]any{"driver": "redis", "connection": "default", "queue": "default", "retry_after": float64(90)},
		Redis:      map[string]any{"client": "predis", "options": map[string]any{"prefix": "app_"}, "default": list("0"), "cache": list("1")},
		CacheStore: map[string]any{"driver": "redis", "connection": "cache", "lock_connection": "default"},
	}, OpenOptions{Repository: repository(t, cfg), Horizon: HorizonOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := st.StateStores()["redis"]
	if got, err := r.Locks.Acquire(ctx, "laravel_cache:lock", "owner", 10); err != nil || !got {
		t.Fatalf("acquire: %v %v", got, err)
	}
	if added, err := r.Cache.Add(ctx, "laravel_cache:counter", []byte("i:0;"), time.Minute); err != nil || !added {
		t.Fatalf("add: %v %v", added, err)
	}
	if _, err := st.DurationLimiters()["default"].Acquire(ctx, "window", 2, 60); err != nil {
		t.Fatal(err)
	}
	id, err := pushID(ctx, st.Store, jobqueue.PushItem{Payload: built(t, "App\\Jobs\\NoopJob")})
	if err != nil {
		t.Fatal(err)
	}
	db0 := redis.NewClient(&redis.Options{Addr: master.Addr, DB: 0})
	db1 := redis.NewClient(&redis.Options{Addr: master.Addr, DB: 1})
	t.Cleanup(func() { db0.Close(); db1.Close() })
	for key, want := range map[string]int64{"app_laravel_cache:lock": 1, "app_window": 1, "app_queues:default": 1, "app_horizon:" + id: 1} {
		if n, _ := db0.Exists(ctx, key).Result(); n != want {
			t.Errorf("%s on the master's database 0: exists %d", key, n)
		}
	}
	if v, _ := db1.Get(ctx, "app_laravel_cache:counter").Result(); v != "0" {
		t.Errorf("the counter on the cache connection (database 1): %q", v)
	}
}
