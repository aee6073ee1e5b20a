package redisproto

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/redis/go-redis/v9"
)

// clock is a settable test clock.
type clock struct{ unix atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.unix.Store(1_700_000_000)
	return c
}

func (c *clock) now() time.Time                { return time.Unix(c.unix.Load(), 0) }
func (c *clock) advance(d time.Duration)       { c.unix.Add(int64(d / time.Second)) }
func (c *clock) at(offset time.Duration) int64 { return c.unix.Load() + int64(offset/time.Second) }

// testConfig is a queue connection on srv with its own prefix.
func testConfig(addr, prefix string) Config {
	return Config{
		Connection: "redis", Queue: "default", RetryAfter: 90 * time.Second,
		Redis: RedisConfig{Name: "default", Client: "phpredis", Addrs: []string{addr}, Prefix: prefix},
	}
}

// openQueue opens cfg with the clock and closes it at the end.
func openQueue(t *testing.T, cfg Config, c *clock) *Queue {
	t.Helper()
	q, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		q.SetClock(c.now)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// payloadFor is a payload as RedisQueue writes it for a job (keys in
// Laravel 8's order, JSON_UNESCAPED_UNICODE escaping).
func payloadFor(uuid, id string, attempts int, extra string) []byte {
	return []byte(`{"uuid":"` + uuid + `","displayName":"App\\Jobs\\NoopJob","job":"Illuminate\\Queue\\CallQueuedHandler@call",` +
		`"maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,` +
		`"data":{"commandName":"App\\Jobs\\NoopJob","command":"O:15:\"App\\Jobs\\NoopJob\":0:{}"}` + extra +
		`,"id":"` + id + `","attempts":` + fmt.Sprint(attempts) + `}`)
}

// dump is the keyspace under prefix, prefix removed, one line per key:
// lists in order, sorted sets with scores in rank order.
func dump(t *testing.T, c redis.UniversalClient, prefix string) string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	var mu sync.Mutex
	collect := func(ctx context.Context, client *redis.Client) error {
		ks, err := client.Keys(ctx, prefix+"*").Result()
		mu.Lock()
		keys = append(keys, ks...)
		mu.Unlock()
		return err
	}
	var err error
	if cc, ok := c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, collect)
	} else {
		err = collect(ctx, c.(*redis.Client))
	}
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		typ, err := c.Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s (%s):", strings.TrimPrefix(k, prefix), typ)
		switch typ {
		case "list":
			vals, err := c.LRange(ctx, k, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				fmt.Fprintf(&b, " %q", v)
			}
		case "zset":
			vals, err := c.ZRangeWithScores(ctx, k, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				fmt.Fprintf(&b, " %q@%s", v.Member, strconv.FormatFloat(v.Score, 'f', -1, 64))
			}
		default:
			t.Fatalf("unexpected key %s of type %s", k, typ)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// jsonEqual reports whether two JSON documents decode to the same value.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// server starts a private redis-server for the test.
func server(t *testing.T) *testredis.Server { return testredis.Start(t) }

// mustPop pops one job and fails unless there is one.
func mustPop(t *testing.T, q *Queue, queue string) *Job {
	t.Helper()
	res, err := q.Pop(ctxT(t), queue, PopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != 1 {
		t.Fatalf("popped %d jobs from %q, want 1", len(res.Jobs), queue)
	}
	return res.Jobs[0]
}

// waitUntil polls cond until it holds or the timeout passes.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, timeout, what, cond)
}

func zmember(score int64, member string) redis.Z {
	return redis.Z{Score: float64(score), Member: member}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
