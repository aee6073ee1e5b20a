package database

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// createCacheTable makes the table `php artisan cache:table` creates.
func createCacheTable(t *testing.T, q *Queue) {
	t.Helper()
	d := q.Dialect()
	value := "text"
	if d.Name() == appconfig.EngineMySQL || d.Name() == appconfig.EngineMariaDB {
		value = "mediumtext"
	}
	ddl := fmt.Sprintf("create table %s (%s varchar(255) not null primary key, %s %s not null, %s integer not null)",
		d.Quote(q.cfg.CacheTable), d.Quote("key"), d.Quote("value"), value, d.Quote("expiration"))
	if _, err := q.DB().Exec(ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.DB().Exec("drop table " + d.Quote(q.cfg.CacheTable)) })
}

func TestDatabaseCacheBehavesLikeLaravels(t *testing.T) {
	for _, engine := range allEngines {
		t.Run(engine, func(t *testing.T) {
			cfg := engineConfig(t, engine, t.TempDir())
			cfg.CacheStore, cfg.CacheTable, cfg.CachePrefix = "database", "cache_"+testdsn.Suffix(t), "laravel_cache"
			e := openEnv(t, engine, cfg, Options{})
			createCacheTable(t, e.q)
			c := e.q.Cache()
			ctx := context.Background()
			if _, ok, err := c.Get(ctx, "job-exceptions:u1"); ok || err != nil {
				t.Fatalf("missing key: ok %v err %v", ok, err)
			}
			if err := c.Put(ctx, "job-exceptions:u1", []byte("i:0;"), 24*time.Hour); err != nil {
				t.Fatal(err)
			}
			for want := int64(1); want <= 3; want++ {
				n, ok, err := c.Increment(ctx, "job-exceptions:u1")
				if err != nil || !ok || n != want {
					t.Fatalf("increment: %d %v %v, want %d", n, ok, err, want)
				}
			}
			// The row is what PHP reads: prefixed key, serialized int, a
			// day's expiration.
			var key, value string
			var expiration int64
			if err := e.q.DB().QueryRow(fmt.Sprintf("select %s, %s, %s from %s", e.q.Dialect().Quote("key"), e.q.Dialect().Quote("value"), e.q.Dialect().Quote("expiration"), e.q.Dialect().Quote(cfg.CacheTable))).Scan(&key, &value, &expiration); err != nil {
				t.Fatal(err)
			}
			if key != "laravel_cachejob-exceptions:u1" || value != "i:3;" || expiration != e.clock.Unix()+86400 {
				t.Fatalf("row %q %q %d", key, value, expiration)
			}
			if _, ok, _ := c.Increment(ctx, "missing"); ok {
				t.Fatal("incrementing a missing key must report ok=false, as DatabaseStore returns false")
			}
			c.Put(ctx, "text", []byte(`s:3:"abc";`), time.Hour)
			if _, ok, _ := c.Increment(ctx, "text"); ok {
				t.Fatal("a non-numeric value must not be incremented")
			}
			c.Put(ctx, "numeric-string", []byte(`s:1:"5";`), time.Hour)
			if n, ok, _ := c.Increment(ctx, "numeric-string"); !ok || n != 6 {
				t.Fatalf("numeric string: %d %v", n, ok)
			}
			e.clock.Set(e.clock.Now().Add(25 * time.Hour))
			if _, ok, err := c.Get(ctx, "job-exceptions:u1"); ok || err != nil {
				t.Fatal("an expired value must read as missing")
			}
			if err := c.Forget(ctx, "numeric-string"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
