package dbcache_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/cache/dbcache"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/store/database"
)

// The expiry rules of the cache store's add and of DatabaseLock::acquire,
// which the tests against PHP (worker/internal/jobmiddleware/ratelimiter_php_test.go) cannot reach
// with Carbon's clock frozen: an expired row is taken over, a live one is
// not, and the lottery deletes expired locks.

// clockAt opens the queue's database a second time with a clock the test
// moves.
func clockAt(t *testing.T, q *database.Queue) (*database.Queue, *atomic.Int64) {
	var now atomic.Int64
	now.Store(time.Now().Unix())
	q2, err := database.Open(context.Background(), q.Config(), database.Options{Clock: func() time.Time { return time.Unix(now.Load(), 0) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q2.Close() })
	return q2, &now
}

func TestAddTakesOverOnlyAnExpiredRow(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		cfg := testdb.WithLocks(t, testdb.Config(t, engine))
		q := testdb.Open(t, cfg)
		testdb.CreateCacheTable(t, q)
		q2, now := clockAt(t, q)
		c := dbcache.New(q2.SQL(), cfg.CacheTable, "p:")
		ctx := context.Background()
		for i, step := range []struct {
			value   string
			advance int64
			want    bool
		}{
			{"i:1;", 0, true},  // missing: inserted
			{"i:2;", 5, false}, // live (expires at +10): kept
			{"i:3;", 5, true},  // expired at exactly its expiration: taken over
		} {
			now.Add(step.advance)
			added, err := c.Add(ctx, "k", []byte(step.value), 10*time.Second)
			if err != nil || added != step.want {
				t.Fatalf("step %d: added %v, %v; want %v", i, added, err, step.want)
			}
		}
		v, ok, err := c.Get(ctx, "k")
		if err != nil || !ok || string(v) != "i:3;" {
			t.Fatalf("value %q %v %v", v, ok, err)
		}
	})
}

func TestLocksAcquireAndLottery(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		cfg := testdb.WithLocks(t, testdb.Config(t, engine))
		q := testdb.Open(t, cfg)
		testdb.CreateLockTable(t, q)
		q2, now := clockAt(t, q)
		l := dbcache.NewLocks(q2.SQL(), cfg.CacheLockTable, "p:").WithLottery(0, 100)
		ctx := context.Background()
		acquire := func(name, owner string, seconds int64, want bool) {
			t.Helper()
			if got, err := l.Acquire(ctx, name, owner, seconds); err != nil || got != want {
				t.Fatalf("Acquire(%s, %s, %d) = %v, %v; want %v", name, owner, seconds, got, err, want)
			}
		}
		acquire("a", "o1", 10, true)
		acquire("a", "o2", 10, false)
		now.Add(1)
		acquire("a", "o1", 10, true) // its owner renews it
		if owner, ok, _ := l.Owner(ctx, "a"); !ok || owner != "o1" {
			t.Fatalf("owner %q %v", owner, ok)
		}
		acquire("b", "o1", 0, true) // 0 seconds: the lock timeout (a day)
		acquire("c", "o1", 1, true)
		now.Add(10)
		acquire("a", "o2", 10, true) // expired: taken over
		// A lottery that always wins deletes the expired ones ("c").
		l.WithLottery(1, 1)
		acquire("d", "o1", 10, true)
		for name, want := range map[string]bool{"a": true, "b": true, "c": false, "d": true} {
			if _, ok, err := l.Owner(ctx, name); err != nil || ok != want {
				t.Errorf("lock %s held: %v (%v), want %v", name, ok, err, want)
			}
		}
		var exp int64
		d := q.Dialect()
		if err := q.DB().QueryRow(fmt.Sprintf("select %s from %s where %s = 'p:b'", d.Quote("expiration"), d.Quote(cfg.CacheLockTable), d.Quote("key"))).Scan(&exp); err != nil {
			t.Fatal(err)
		}
		if want := now.Load() - 10 + dbcache.DefaultLockTimeout; exp != want {
			t.Errorf("a lock taken for 0 seconds expires at %d, want %d (a day after)", exp, want)
		}
	})
}
