package redisproto

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/redis/go-redis/v9"
)

// TestPeekIsBoundedAndChangesNothing: Peek counts a queue by state
// (due delayed jobs and expired reservations apart), returns only the
// first jobs asked for, cut to their ends unless they hold the marker,
// and leaves every key as it was, on a list far longer than it reads.
func TestPeekIsBoundedAndChangesNothing(t *testing.T) {
	srv := server(t)
	c := newClock()
	q := openQueue(t, testConfig(srv.Addr, "p_"), c)
	ctx := ctxT(t)
	rc := srv.Client(t)
	k := q.Config().Keys("")
	// 20,000 ready jobs, pushed raw: the list is much longer than a peek.
	const ready = 20_000
	pipe := rc.Pipeline()
	for i := range ready {
		pipe.RPush(ctx, k.Ready, payloadFor("u-"+strconv.Itoa(i), "r"+strconv.Itoa(i), 0, ""))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// Three reserved; the first one's reservation expired 10 s ago.
	first := mustPop(t, q, "")
	mustPop(t, q, "")
	mustPop(t, q, "")
	if err := rc.ZAddXX(ctx, k.Reserved, redis.Z{Score: float64(c.at(-10 * time.Second)), Member: first.Reserved}).Err(); err != nil {
		t.Fatal(err)
	}
	model := `,"models":"ModelIdentifier"`
	for i, delay := range []time.Duration{0, time.Minute, time.Hour, 2 * time.Hour} {
		if _, err := q.Later(ctx, "", payloadFor("d-"+strconv.Itoa(i), "d"+strconv.Itoa(i), 0, model), delay); err != nil {
			t.Fatal(err)
		}
	}
	before := dump(t, rc, "p_")

	v, err := q.Peek(ctx, "", PeekOptions{Head: 3, Reserved: 2, Prefix: 40, Suffix: 30, Whole: "ModelIdentifier",
		DueBy: []int64{c.at(0), c.at(90 * time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Counts{Ready: ready - 3, Delayed: 4, DelayedDue: 1, Reserved: 3, ReservedExpired: 1}); v.Counts != want {
		t.Errorf("counts %+v, want %+v", v.Counts, want)
	}
	if len(v.Ready) != 3 || len(v.Delayed) != 3 || len(v.Reserved) != 2 {
		t.Fatalf("peeked %d ready, %d delayed, %d reserved; want 3, 3, 2", len(v.Ready), len(v.Delayed), len(v.Reserved))
	}
	for _, p := range v.Ready {
		if !p.Cut() || len(p.Head) != 40 || len(p.Tail) != 30 || !strings.HasPrefix(p.Head, `{"uuid":"u-`) || !strings.HasSuffix(p.Tail, `"attempts":0}`) {
			t.Errorf("a ready job cut to %q ... %q", p.Head, p.Tail)
		}
	}
	for _, p := range v.Delayed {
		if p.Cut() || !strings.Contains(p.Head, "ModelIdentifier") || p.Score < c.at(0) {
			t.Errorf("a delayed job holding the marker came back as %q ... %q (score %d)", p.Head, p.Tail, p.Score)
		}
	}
	if !slices.IsSortedFunc(v.Delayed, func(a, b Peeked) int { return int(a.Score - b.Score) }) {
		t.Errorf("delayed jobs out of order: %+v", v.Delayed)
	}
	if v.Reserved[0].Head != first.Reserved || v.Reserved[0].Score != c.at(-10*time.Second) {
		t.Errorf("the first reserved job is %q at %d, want the oldest pop's member at %d", v.Reserved[0].Head, v.Reserved[0].Score, c.at(-10*time.Second))
	}
	if len(v.DueBy) != 2 || v.DueBy[1]-v.DueBy[0] != 2 {
		t.Errorf("due by %v: want the jobs of 1 minute and 1 hour between the bounds", v.DueBy)
	}
	if after := dump(t, rc, "p_"); after != before {
		t.Error("Peek changed Redis")
	}
	if v, err := q.Peek(ctx, "empty", PeekOptions{Head: 5, Reserved: 5}); err != nil || v.Counts != (Counts{}) || len(v.Ready)+len(v.Delayed)+len(v.Reserved) != 0 {
		t.Errorf("an empty queue peeked as %+v %v", v, err)
	}
}

// TestScanQueuesFindsEveryQueue: a scan a few keys at a time finds every
// queue of the prefix (by any of its keys) and none of another prefix,
// ending a pass, on one server and on a three-master cluster.
func TestScanQueuesFindsEveryQueue(t *testing.T) {
	single := server(t)
	cl := testredis.StartCluster(t)
	for name, cfg := range map[string]Config{
		"single":  testConfig(single.Addr, "s_"),
		"cluster": {Connection: "redis", Queue: "{default}", RetryAfter: 90 * time.Second, Redis: RedisConfig{Name: "c", Client: "phpredis", Addrs: cl.Addrs, Cluster: true, Prefix: "s_"}},
	} {
		t.Run(name, func(t *testing.T) {
			q := openQueue(t, cfg, newClock())
			ctx := ctxT(t)
			other := cfg
			other.Redis.Prefix = "other_"
			oq := openQueue(t, other, nil)
			want := []string{"{a}", "{b}", "{c}", "{d}"}
			for _, name := range want[:3] {
				if _, err := q.Push(ctx, name, payloadFor("u"+name, "i"+name, 0, "")); err != nil {
					t.Fatal(err)
				}
				if _, err := oq.Push(ctx, name+"x", payloadFor("o"+name, "o"+name, 0, "")); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := q.Later(ctx, "{d}", payloadFor("ud", "id", 0, ""), time.Hour); err != nil {
				t.Fatal(err)
			}
			var scan QueueScan
			found := map[string]bool{}
			for steps := 0; ; steps++ {
				if steps == 100 {
					t.Fatal("no pass ended in 100 steps")
				}
				names, done, err := q.ScanQueues(ctx, &scan, 2)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range names {
					found[n] = true
				}
				if done {
					break
				}
			}
			var got []string
			for n := range found {
				got = append(got, n)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("found %v, want %v", got, want)
			}
		})
	}
}
