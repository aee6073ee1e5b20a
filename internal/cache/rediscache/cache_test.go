package rediscache

import (
	"context"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testredis"
)

// TestValuesAsRedisStoreKeepsThem: numbers are stored as their text (as
// RedisStore::serialize does, so that INCRBY works and queue:restart
// leaves a plain Unix time), other values PHP-serialized; reads give
// PHP-serialized bytes back, a number's text as the string PHP's get()
// returns.
func TestValuesAsRedisStoreKeepsThem(t *testing.T) {
	srv := testredis.Start(t)
	rc := srv.Client(t)
	ctx := context.Background()
	c := New(rc, "laravel_database_laravel_cache:")
	for serialized, stored := range map[string]string{
		"i:1700000000;": "1700000000",
		"d:1.5;":        "1.5",
		`s:2:"42";`:     "42",
		`s:3:"abc";`:    `s:3:"abc";`,
		"b:1;":          "b:1;",
		"a:0:{}":        "a:0:{}",
	} {
		if err := c.Put(ctx, "k", []byte(serialized), time.Hour); err != nil {
			t.Fatal(err)
		}
		if got, _ := rc.Get(ctx, "laravel_database_laravel_cache:k").Result(); got != stored {
			t.Errorf("Put(%s) stored %q, want %q", serialized, got, stored)
		}
		if ttl, _ := rc.TTL(ctx, "laravel_database_laravel_cache:k").Result(); ttl <= 0 || ttl > time.Hour {
			t.Errorf("ttl %s", ttl)
		}
	}
	rc.Set(ctx, "laravel_database_laravel_cache:illuminate:queue:restart", "1700000100", 0)
	if v, ok, err := c.Get(ctx, "illuminate:queue:restart"); err != nil || !ok || string(v) != `s:10:"1700000100";` {
		t.Fatalf("get restart: %q %v %v", v, ok, err)
	}
	if _, ok, err := c.Get(ctx, "missing"); ok || err != nil {
		t.Fatalf("get missing: %v %v", ok, err)
	}
	if err := c.Put(ctx, "job-exceptions:u", []byte("i:0;"), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 2; want++ {
		if n, ok, err := c.Increment(ctx, "job-exceptions:u"); err != nil || !ok || n != want {
			t.Fatalf("increment: %d %v %v", n, ok, err)
		}
	}
	if err := c.Put(ctx, "text", []byte(`s:1:"x";`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Increment(ctx, "text"); ok || err != nil {
		t.Fatalf("increment of a non-number: %v %v", ok, err)
	}
	if err := c.Forget(ctx, "job-exceptions:u"); err != nil {
		t.Fatal(err)
	}
	if n, _ := rc.Exists(ctx, "laravel_database_laravel_cache:job-exceptions:u").Result(); n != 0 {
		t.Fatal("forget left the key")
	}
}

func TestIsNumericAsPHP8(t *testing.T) {
	for s, want := range map[string]bool{
		"1": true, "-1": true, "+1.5": true, " 1": true, "1 ": true, ".5": true, "5.": true, "1e3": true, "1E-3": true,
		"": false, " ": false, "1e": false, "0x1A": false, "abc": false, "1 2": false, ".": false, "-": false,
	} {
		if got := isNumeric(s); got != want {
			t.Errorf("isNumeric(%q) = %v, want %v", s, got, want)
		}
	}
}
