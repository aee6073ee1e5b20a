package redisproto

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/redis/go-redis/v9"
)

// TestDeleteBatchOneRoundTrip: a Delete of many finished jobs is one
// request to the server (a pipeline of the ZREM PHP sends per job), and a
// job in the batch whose reservation was lost (another worker popped it
// again) is reported and its new reservation left alone, while the others
// are deleted. (A MULTI of one ZMSCORE and one multi-member ZREM per
// queue was tried: on Redis 7.0 it costs the server twice the pipeline's
// CPU per job, ZMSCORE formatting every score with snprintf.)
func TestDeleteBatchOneRoundTrip(t *testing.T) {
	srv := server(t)
	c := newClock()
	cfg := testConfig(srv.Addr, "d_")
	goQ := openQueue(t, cfg, c)
	other := openQueue(t, cfg, c)
	ctx := ctxT(t)
	push := func(queue string, from, to int) {
		for i := from; i < to; i++ {
			id := fmt.Sprintf("%s-%d", queue, i)
			if _, err := goQ.Push(ctx, queue, payloadFor(id, id, 0, "")); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The first job of "default" is popped and its reservation
	// lost: it expires and the other worker pops it again.
	push("default", 0, 1)
	stale := mustPop(t, goQ, "default")
	c.advance(90 * time.Second)
	again := mustPop(t, other, "default")
	if string(again.Payload) != stale.Reserved {
		t.Fatalf("the other worker popped %s", again.Payload)
	}
	push("default", 1, 11)
	push("emails", 0, 11)
	batch := []*Job{stale}
	for _, queue := range []string{"default", "emails"} {
		res, err := goQ.Pop(ctx, queue, PopOptions{Max: 20})
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, res.Jobs...)
	}
	if len(batch) != 22 {
		t.Fatalf("popped %d jobs, want 22", len(batch))
	}
	rc := srv.Client(t)
	if err := rc.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	trips := &requestCounter{}
	goQ.Client().AddHook(trips)
	lost, err := goQ.Delete(ctx, batch...)
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 1 || lost[0] != stale {
		t.Fatalf("lost %v, want the stale job only", lost)
	}
	if n := trips.n.Load(); n != 1 {
		t.Errorf("the delete of 22 jobs of two queues took %d requests, want 1", n)
	}
	stats := testredis.CommandCalls(t, rc)
	if stats["zrem"] != 22 {
		t.Errorf("ZREM ran %d times, want 22, one per job (commandstats %v)", stats["zrem"], stats)
	}
	// Only the other worker's reservation is left.
	for _, queue := range []string{"default", "emails"} {
		members, err := rc.ZRange(ctx, cfg.Keys(queue).Reserved, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		want := []string{}
		if queue == "default" {
			want = []string{again.Reserved}
		}
		if fmt.Sprint(members) != fmt.Sprint(want) {
			t.Errorf("%s reserved: %q, want %q", queue, members, want)
		}
	}
	if lost, err := other.Delete(ctx, again); err != nil || len(lost) != 0 {
		t.Fatalf("the holder's delete: %v %v", lost, err)
	}
}

// requestCounter counts the requests a go-redis client sends: a command,
// a pipeline or a MULTI each one (a new connection's HELLO aside).
type requestCounter struct{ n atomic.Int64 }

func (r *requestCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *requestCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		// A new connection's handshake is no request of the caller's.
		if cmd.Name() != "hello" {
			r.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (r *requestCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// TestPopTakesTokensInOneTrim: a pop of n jobs takes their n notify
// tokens (Laravel's LPOP per job) in one LTRIM, and tells a copy by its
// ZADD NX instead of a ZSCORE first: per job one LPOP and one ZADD.
func TestPopTakesTokensInOneTrim(t *testing.T) {
	srv := server(t)
	c := newClock()
	cfg := testConfig(srv.Addr, "t_")
	q := openQueue(t, cfg, c)
	ctx := ctxT(t)
	for i := range 20 {
		id := fmt.Sprint(i)
		if _, err := q.Push(ctx, "", payloadFor(id, id, 0, "")); err != nil {
			t.Fatal(err)
		}
	}
	rc := srv.Client(t)
	if err := rc.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := q.Pop(ctx, "", PopOptions{Max: 16})
	if err != nil || len(res.Jobs) != 16 {
		t.Fatalf("popped %d jobs: %v", len(res.Jobs), err)
	}
	stats := testredis.CommandCalls(t, rc)
	if stats["lpop"] != 16 || stats["zadd"] != 16 || stats["ltrim"] != 1 || stats["zscore"] != 0 {
		t.Errorf("a pop of 16 jobs ran %v, want 16 LPOPs, 16 ZADDs, one LTRIM and no ZSCORE", stats)
	}
	if n, err := rc.LLen(ctx, cfg.Keys("default").Notify).Result(); err != nil || n != 4 {
		t.Errorf("%d notify tokens left (%v), want 4", n, err)
	}
}
