package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/worker"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// TestDatabaseQueueSharesTheRedisCache: on a database queue whose app
// keeps its default cache in Redis (CACHE_DRIVER=redis), the connection
// reaches that store as PHP does (the machine's Redis on 6379, under a key
// prefix of the test's own, never flushed): no startup warning, the
// worker's lock stores and middleware state are the redis store's, and
// `php artisan queue:restart`'s stamp in Redis stops the worker. With a
// file store the warning stays.
func TestDatabaseQueueSharesTheRedisCache(t *testing.T) {
	ctx := context.Background()
	testdsn.NeedRedis(t)
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", DB: 1, Protocol: 2, DisableIdentity: true})
	defer rc.Close()
	if err := rc.Ping(ctx).Err(); err != nil {
		if testdsn.Required() {
			t.Fatalf("Redis on 6379: %v", err)
		}
		t.Skipf("no Redis on 6379: %v", err)
	}
	prefix := fmt.Sprintf("laraworker_console_%d_", time.Now().UnixNano())
	t.Cleanup(func() {
		if keys, _ := rc.Keys(context.Background(), prefix+"*").Result(); len(keys) > 0 {
			rc.Del(context.Background(), keys...)
		}
	})
	server := func(db string) map[string]any {
		return map[string]any{"host": "127.0.0.1", "port": "6379", "database": db}
	}
	// The Laravel 8 skeleton: the store on "cache" (database 1), its
	// locks on "default" (moved to database 1 too, so one cleanup sees
	// every key).
	info := appconfig.AppInfo{Connection: "database", QueueDriver: "database", Version: "8.83.27",
		SharedRedis: &appconfig.SharedRedisConfig{
			Redis:      appconfig.RedisArrays{"client": "phpredis", "options": map[string]any{"prefix": prefix}, "default": server("1"), "cache": server("1")},
			CacheStore: map[string]any{"driver": "redis", "connection": "cache", "lock_connection": "default"},
		}}
	cfg := appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(t.TempDir(), "q.sqlite"),
		CacheStore: "redis", CachePrefix: "laravel_cache"}.WithDefaults()
	var logs bytes.Buffer
	log := zerolog.New(&logs)
	conn, err := queueconn.Open(ctx, cfg, info, queueconn.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	warnUnsharedCache(conn, info.Version, log)
	if !sharesCache(conn) || logs.Len() != 0 {
		t.Fatalf("shares %v, logged %s", sharesCache(conn), logs.String())
	}

	locks, state, closeLocks := lockStores(conn.Store, cfg, info, info.Version, log)
	defer closeLocks()
	lockKey := prefix + `laravel_cache:laravel_unique_job:App\Jobs\UniqueJob1`
	rc.Set(ctx, lockKey, "owner", time.Minute)
	if err := locks["redis"].ReleaseOwned(ctx, `laravel_unique_job:App\Jobs\UniqueJob1`, "owner"); err != nil {
		t.Fatal(err)
	}
	if n, _ := rc.Exists(ctx, lockKey).Result(); n != 0 {
		t.Error("the unique lock PHP took is still there")
	}
	if s := state.stores["redis"]; s.Cache == nil || s.Locks == nil || s.Prefix != "laravel_cache:" || state.limiters["default"] == nil || state.limiters["cache"] == nil {
		t.Errorf("middleware state %+v, limiters %v", s, state.limiters)
	}

	// queue:restart on Laravel 8: Cache::forever(..., $this->currentTime())
	// in the redis store.
	restartKey := prefix + "laravel_cache:illuminate:queue:restart"
	rc.Set(ctx, restartKey, "1764600000", 0)
	w, err := worker.New(conn.Store, handlers.NewRegistry(), worker.Config{Sleep: 10 * time.Millisecond, Logger: zerolog.Nop(),
		Locks: locks, StateStores: state.stores, DurationLimiters: state.limiters})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan worker.StopReason, 1)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { stopped <- w.Run(runCtx) }()
	testwait.Until(t, 10*time.Second, "the worker's first loops", func() bool { return w.Stats().Loops >= 2 })
	rc.Set(ctx, restartKey, "1764600001", 0)
	if reason := testwait.Recv(t, stopped, 10*time.Second, "the worker stopping"); reason != worker.StopRestart {
		t.Fatalf("stopped for %q, want %q", reason, worker.StopRestart)
	}

	// The same app on the file store: nothing to share, the warning says so.
	cfg.CacheStore = "file"
	info.SharedRedis.CacheStore = nil
	fileConn, err := queueconn.Open(ctx, cfg, info, queueconn.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer fileConn.Close()
	warnUnsharedCache(fileConn, info.Version, log)
	if sharesCache(fileConn) || !bytes.Contains(logs.Bytes(), []byte(`"cache_store":"file"`)) {
		t.Errorf("file store: shares %v, logged %s", sharesCache(fileConn), logs.String())
	}
	if _, ok := fileConn.Store.DurationLimiters()["default"]; !ok {
		t.Error("no DurationLimiter for the ...WithRedis middleware beside a file store")
	}
}

// TestRedisLockStoreThroughSentinel: an app whose redis lock connection
// goes through Redis Sentinel (predis) and whose default store is not
// redis: the worker's "redis" lock store is opened from the app's
// database.redis, through the sentinel, and releases the lock PHP took on
// the master. It used to be opened from REDIS_HOST, which for such a
// connection says nothing (127.0.0.1:6379 by default).
func TestRedisLockStoreThroughSentinel(t *testing.T) {
	ctx := context.Background()
	master := testredis.Start(t)
	sentinel := testredis.StartSentinel(t, "lwmaster", master, testredis.SentinelOptions{})
	prefix := fmt.Sprintf("laraworker_console_sentinel_%d_", time.Now().UnixNano())
	list := map[string]any{"0": "tcp://" + sentinel.Addr, "options": map[string]any{"replication": "sentinel", "service": "lwmaster"}}
	info := appconfig.AppInfo{Connection: "database", QueueDriver: "database", Version: "8.83.27",
		SharedRedis: &appconfig.SharedRedisConfig{Redis: appconfig.RedisArrays{"client": "predis", "options": map[string]any{"prefix": prefix}, "default": list}}}
	cfg := appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(t.TempDir(), "q.sqlite"),
		CacheStore: "file", CachePrefix: "laravel_cache",
		// As appconfig reads such an app: no host it could name.
		Redis: appconfig.RedisConfig{Addr: "127.0.0.1:6379", LockConnection: "default", Err: errors.New("the redis connection \"default\" is a list of servers")}}.WithDefaults()
	var logs bytes.Buffer
	log := zerolog.New(&logs)
	conn, err := queueconn.Open(ctx, cfg, info, queueconn.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	locks, state, closeLocks := lockStores(conn.Store, cfg, info, info.Version, log)
	defer closeLocks()
	if locks["redis"] == nil || state.limiters["default"] == nil {
		t.Fatalf("no redis lock store (%v) or limiter (%v): %s", locks, state.limiters, logs.String())
	}
	mc := master.Client(t)
	lockKey := prefix + `laravel_cache:laravel_unique_job:App\Jobs\UniqueJob1`
	mc.Set(ctx, lockKey, "owner", time.Minute)
	if err := locks["redis"].ReleaseOwned(ctx, `laravel_unique_job:App\Jobs\UniqueJob1`, "owner"); err != nil {
		t.Fatal(err)
	}
	if n, _ := mc.Exists(ctx, lockKey).Result(); n != 0 {
		t.Error("the unique lock PHP took on the sentinel's master is still there")
	}
}
