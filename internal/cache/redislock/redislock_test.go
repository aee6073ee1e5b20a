package redislock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/redis/go-redis/v9"
)

// testStore connects to the machine's Redis (LARAWORKER_TEST_REDIS, default
// 127.0.0.1:6379) with a key prefix of its own; it deletes only the keys
// under that prefix. No Redis skips the test, with the reason.
func testStore(t *testing.T) (*Store, *redis.Client, string) {
	t.Helper()
	testdsn.NeedRedis(t)
	addr := testdsn.RedisAddr()
	b := make([]byte, 6)
	rand.Read(b)
	connPrefix := "laraworker_test_" + hex.EncodeToString(b) + "_database_"
	s, err := New(appconfig.RedisConfig{Addr: addr, Prefix: connPrefix, StorePrefix: "laravel_cache_"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		s.Close()
		if testdsn.Required() {
			t.Fatalf("no Redis at %s: %v", addr, err)
		}
		t.Skipf("no Redis at %s: %v", addr, err)
	}
	raw := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() {
		keys, _ := raw.Keys(ctx, connPrefix+"*").Result()
		if len(keys) > 0 {
			raw.Del(ctx, keys...)
		}
		raw.Close()
		s.Close()
	})
	return s, raw, connPrefix + "laravel_cache_"
}

// acquire takes the lock as RedisLock::acquire does: SET key owner EX NX
// on the prefixed key.
func acquire(t *testing.T, c *redis.Client, key, owner string) {
	t.Helper()
	ok, err := c.SetNX(context.Background(), key, owner, time.Minute).Result()
	if err != nil || !ok {
		t.Fatalf("acquire %s: %v %v", key, ok, err)
	}
}

func TestLockKeysCarryBothPrefixes(t *testing.T) {
	s, raw, prefix := testStore(t)
	ctx := context.Background()
	name := `laravel_unique_job:App\Jobs\UniqueJob:1`
	if got := s.Key(name); got != prefix+name {
		t.Fatalf("key %q, want %q", got, prefix+name)
	}
	acquire(t, raw, prefix+name, "owner-a")
	acquire(t, raw, prefix+name+"2", "owner-a")
	if err := s.ForceRelease(ctx, name); err != nil {
		t.Fatal(err)
	}
	if n, _ := raw.Exists(ctx, prefix+name).Result(); n != 0 {
		t.Error("ForceRelease left the lock")
	}
	if n, _ := raw.Exists(ctx, prefix+name+"2").Result(); n != 1 {
		t.Error("ForceRelease deleted another lock")
	}
}

func TestReleaseOwnedComparesTheOwner(t *testing.T) {
	s, raw, prefix := testStore(t)
	ctx := context.Background()
	name := "laravel_unique_job:x:1"
	acquire(t, raw, prefix+name, "owner-b")
	if err := s.ReleaseOwned(ctx, name, "owner-a"); err != nil {
		t.Fatal(err)
	}
	if v, _ := raw.Get(ctx, prefix+name).Result(); v != "owner-b" {
		t.Fatalf("another owner's lock was released (value %q)", v)
	}
	if err := s.ReleaseOwned(ctx, name, "owner-b"); err != nil {
		t.Fatal(err)
	}
	if n, _ := raw.Exists(ctx, prefix+name).Result(); n != 0 {
		t.Error("the owner's release left the lock")
	}
	if err := s.ReleaseOwned(ctx, "laravel_unique_job:none", "x"); err != nil {
		t.Errorf("releasing a missing lock: %v", err)
	}
}
