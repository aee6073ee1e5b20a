package redisproto

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testredis"
)

// TestPopNEqualsSinglePops: one script popping n jobs leaves the state n
// of Laravel's pops (each after its two migration scripts) leave, and
// returns the same jobs in the same order.
func TestPopNEqualsSinglePops(t *testing.T) {
	srv := server(t)
	c := newClock()
	one := openQueue(t, testConfig(srv.Addr, "one_"), c)
	many := openQueue(t, testConfig(srv.Addr, "many_"), c)
	ctx := ctxT(t)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 40 {
		p := randomPayload(rng, i)
		delay := time.Duration(rng.IntN(3)) * time.Second
		for _, q := range []*Queue{one, many} {
			var err error
			if delay > 0 {
				_, err = q.Later(ctx, "", p, delay)
			} else {
				_, err = q.Push(ctx, "", p)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	c.advance(time.Second)
	for round, n := range []int{1, 5, 16, 64} {
		res, err := many.Pop(ctx, "", PopOptions{Max: n})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			r, err := one.Pop(ctx, "", PopOptions{Exact: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Jobs) == 0 {
				if i != len(res.Jobs) {
					t.Fatalf("round %d: single pops found %d, PopN %d", round, i, len(res.Jobs))
				}
				break
			}
			if i >= len(res.Jobs) || res.Jobs[i].Reserved != r.Jobs[0].Reserved || string(res.Jobs[i].Payload) != string(r.Jobs[0].Payload) {
				t.Fatalf("round %d: job %d differs", round, i)
			}
		}
		if a, b := dump(t, srv.Client(t), "one_"), dump(t, srv.Client(t), "many_"); a != b {
			t.Fatalf("round %d: states differ:\n%s\n%s", round, a, b)
		}
		c.advance(time.Second)
	}
}

// BenchmarkPop compares popping 16 jobs as Laravel does (3 scripts per
// job), with the one-script pop per job, and with one PopN(16), on a
// private server.
func BenchmarkPop(b *testing.B) {
	addr := testredis.Start(b).Addr
	for _, mode := range []struct {
		name  string
		exact bool
		max   int
	}{{"laravel-3-scripts", true, 1}, {"one-script", false, 1}, {"popN-16", false, 16}} {
		b.Run(mode.name, func(b *testing.B) {
			q, err := Open(context.Background(), testConfig(addr, fmt.Sprintf("bench_%s_", mode.name)))
			if err != nil {
				b.Fatal(err)
			}
			defer q.Close()
			ctx := context.Background()
			p := payloadFor("u", "i", 0, "")
			for b.Loop() {
				b.StopTimer()
				for range 16 {
					if _, err := q.Push(ctx, "", p); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				got := 0
				for got < 16 {
					res, err := q.Pop(ctx, "", PopOptions{Max: mode.max, Exact: mode.exact})
					if err != nil {
						b.Fatal(err)
					}
					got += len(res.Jobs)
				}
				b.StopTimer()
				q.Client().Del(ctx, q.Config().Keys("").Reserved)
				b.StartTimer()
			}
		})
	}
}

// TestPopReportsWhatItMigrated: with PopOptions.Migrated, a pop names the
// members its migrations moved (the due delayed ones, then the expired
// reservations, as RedisQueue::migrate runs them and Horizon's
// JobsMigrated events hear of them), in the one-script pop and in the
// exact one, and leaves the state a pop without the option leaves.
func TestPopReportsWhatItMigrated(t *testing.T) {
	srv := server(t)
	c := newClock()
	ctx := ctxT(t)
	for _, exact := range []bool{false, true} {
		prefix := fmt.Sprintf("exact_%v_", exact)
		q := openQueue(t, testConfig(srv.Addr, prefix), c)
		plain := openQueue(t, testConfig(srv.Addr, "plain"+prefix), c)
		var reserved string
		for _, x := range []*Queue{q, plain} {
			if _, err := x.Push(ctx, "", payloadFor("u1", "i1", 0, "")); err != nil {
				t.Fatal(err)
			}
			reserved = mustPop(t, x, "").Reserved // expires after retry_after
			if _, err := x.Later(ctx, "", payloadFor("u2", "i2", 0, ""), time.Second); err != nil {
				t.Fatal(err)
			}
		}
		c.advance(90 * time.Second)
		res, err := q.Pop(ctx, "", PopOptions{Max: 1, Migrated: true, Exact: exact})
		if err != nil {
			t.Fatal(err)
		}
		delayed := string(payloadFor("u2", "i2", 0, ""))
		if len(res.Migrated) != 2 || res.Migrated[0] != delayed || res.Migrated[1] != reserved {
			t.Fatalf("exact %v: migrated %q, want the delayed job then the expired reservation", exact, res.Migrated)
		}
		other, err := plain.Pop(ctx, "", PopOptions{Max: 1, Exact: exact})
		if err != nil {
			t.Fatal(err)
		}
		if other.Migrated != nil {
			t.Fatalf("migrated %q reported without the option", other.Migrated)
		}
		if a, b := dump(t, srv.Client(t), prefix), dump(t, srv.Client(t), "plain"+prefix); a != b {
			t.Fatalf("exact %v: the option changed the state:\n%s\n%s", exact, a, b)
		}
	}
}
