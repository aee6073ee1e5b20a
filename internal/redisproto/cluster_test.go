package redisproto

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/jobqueue"
)

// TestClusterHashTaggedQueues runs the whole protocol on a three-master
// cluster: hash-tagged queue names as Laravel documents them ({default}),
// 13.5+'s automatic tag, a clear error for an untagged name before 13.5,
// and follow-ups that must stay in the job's slot.
func TestClusterHashTaggedQueues(t *testing.T) {
	cl := testredis.StartCluster(t)
	c := newClock()
	cfg := Config{
		Connection: "redis", Queue: "{default}", RetryAfter: 90 * time.Second,
		Redis: RedisConfig{Name: "clustered", Client: "phpredis", Addrs: cl.Addrs, Cluster: true, Prefix: "laravel_database_"},
	}
	q := openQueue(t, cfg, c)
	rc := cl.Client(t)
	ctx := ctxT(t)

	// Queues in different slots, so more than one master holds jobs.
	queues := []string{"{default}", "{mail}", "{reports}", "{a}", "{b}"}
	masters := map[string]bool{}
	for _, name := range queues {
		k := cfg.Keys(name)
		if err := cfg.CheckQueue(name); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Push(ctx, name, payloadFor("u"+name, "i"+name, 0, "")); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Later(ctx, name, payloadFor("later"+name, "l"+name, 0, ""), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		j := mustPop(t, q, name)
		if j.UUID != "u"+name || j.Queue != name {
			t.Fatalf("popped %+v from %s", j, name)
		}
		if err := q.Release(ctx, j, 0); err != nil {
			t.Fatal(err)
		}
		c.advance(5 * time.Second)
		res, err := q.Pop(ctx, name, PopOptions{Max: 5})
		if err != nil || len(res.Jobs) != 2 {
			t.Fatalf("second pop of %s: %+v %v", name, res, err)
		}
		// The release (score now) migrates ahead of the later push (now+5).
		if res.Jobs[0].Attempts != 2 || res.Jobs[1].Attempts != 1 {
			t.Fatalf("%s: attempts %d, %d; want the released job's 2 then the delayed job's 1", name, res.Jobs[0].Attempts, res.Jobs[1].Attempts)
		}
		if got, err := q.Extend(ctx, res.Jobs...); err != nil || len(got) != 2 {
			t.Fatalf("extend on %s: %v %v", name, got, err)
		}
		if lost, err := q.Unreserve(ctx, res.Jobs[1]); err != nil || len(lost) != 0 {
			t.Fatal(lost, err)
		}
		if lost, err := q.Delete(ctx, res.Jobs[0]); err != nil || len(lost) != 0 {
			t.Fatal(lost, err)
		}
		n, err := q.Size(ctx, name)
		if err != nil || n != 1 {
			t.Fatalf("size of %s: %d %v", name, n, err)
		}
		node, err := rc.MasterForKey(ctx, k.Ready)
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = true
		if Slot(k.Ready) != Slot(k.Reserved) {
			t.Fatalf("%s: keys in different slots", name)
		}
		if s, err := rc.ClusterKeySlot(ctx, k.Ready).Result(); err != nil || int(s) != Slot(k.Ready) {
			t.Fatalf("Slot(%s) = %d, Redis says %d (%v)", k.Ready, Slot(k.Ready), s, err)
		}
	}
	if len(masters) < 2 {
		t.Fatalf("all queues landed on one master (%v); the test does not cover routing", masters)
	}
	if got := dump(t, rc, "laravel_database_"); strings.Count(got, ":reserved") != 0 || strings.Count(got, "(list)") != 2*len(queues) {
		t.Fatalf("after the runs:\n%s", got)
	}

	// Before 13.5 an untagged name has its keys in several slots: refused
	// with the fix named, before anything is sent.
	if _, err := q.Push(ctx, "plain", payloadFor("x", "x", 0, "")); err == nil || !strings.Contains(err.Error(), "hash tag") {
		t.Fatalf("push to an untagged queue on a cluster: %v", err)
	}
	// 13.5+ wraps it: queues:{plain}.
	cfg13 := cfg
	cfg13.HashTagQueues = true
	q13 := openQueue(t, cfg13, c)
	if _, err := q13.Push(ctx, "plain", payloadFor("p", "p", 0, "")); err != nil {
		t.Fatal(err)
	}
	if n, _ := rc.Exists(ctx, "laravel_database_queues:{plain}").Result(); n != 1 {
		t.Fatal("13.5+ did not push to queues:{plain}")
	}
	j := mustPop(t, q13, "plain")
	if j.Queue != "plain" {
		t.Fatalf("job queue %q, want the bare name", j.Queue)
	}
	// A chain link on another slot cannot go in the job's script.
	if err := q13.Complete(ctx, j, jobqueue.PushItem{Queue: "elsewhere", Payload: payloadFor("n", "n", 0, "")}); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("complete across slots: %v", err)
	}
	if err := q13.Complete(ctx, j, jobqueue.PushItem{Queue: "plain", Payload: payloadFor("n", "n", 0, "")}); err != nil {
		t.Fatal(err)
	}
}

// TestClusterBlockingPop: BLPOP on a notify list is routed to its node.
func TestClusterBlockingPop(t *testing.T) {
	cl := testredis.StartCluster(t)
	block := 5 * time.Second
	cfg := Config{
		Connection: "redis", Queue: "{blocking}", RetryAfter: 90 * time.Second, BlockFor: &block,
		Redis: RedisConfig{Name: "clustered", Addrs: cl.Addrs, Cluster: true, Prefix: "p_"},
	}
	q := openQueue(t, cfg, nil)
	ctx := ctxT(t)
	done := make(chan PopResult, 1)
	go func() {
		res, _ := q.Pop(ctx, "", PopOptions{Block: true})
		done <- res
	}()
	waitUntil(t, 5*time.Second, "the pop to block", func() bool {
		node, err := cl.Client(t).MasterForKey(ctx, cfg.Keys("").Notify)
		if err != nil {
			return false
		}
		list, _ := node.ClientList(ctx).Result()
		return strings.Contains(list, "cmd=blpop")
	})
	if _, err := q.Push(ctx, "", payloadFor("w", "w", 0, "")); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if len(res.Jobs) != 1 {
			t.Fatalf("woke with %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking pop did not wake")
	}
}

// TestClusterLookahead: on a cluster the lookahead works on each
// hash-tagged queue's own slot (13.5+'s automatic tag too): the jobs
// behind a foreign head are taken, the foreign jobs stay in order.
func TestClusterLookahead(t *testing.T) {
	cl := testredis.StartCluster(t)
	cfg := Config{
		Connection: "redis", Queue: "{default}", RetryAfter: 90 * time.Second, HashTagQueues: true,
		Redis: RedisConfig{Name: "clustered", Client: "phpredis", Addrs: cl.Addrs, Cluster: true, Prefix: "laravel_database_"},
	}
	q := openQueue(t, cfg, newClock())
	rc := cl.Client(t)
	ctx := ctxT(t)
	for _, name := range []string{"{default}", "{mail}", "plain"} {
		for i, p := range [][]byte{foreignFor("php-"+name, "p"), payloadFor("go1-"+name, "g1", 0, ""), foreignFor("php2-"+name, "p2"), payloadFor("go2-"+name, "g2", 0, "")} {
			if _, err := q.Push(ctx, name, p); err != nil {
				t.Fatal(i, err)
			}
		}
		res, err := q.Pop(ctx, name, only(5, 0, 0))
		if err != nil || len(res.Jobs) != 2 || res.Jobs[0].UUID != "go1-"+name || res.Jobs[1].UUID != "go2-"+name || len(res.Looked) != 1 {
			t.Fatalf("pop of %s: %+v %v", name, res, err)
		}
		list, err := rc.LRange(ctx, cfg.Keys(name).Ready, 0, -1).Result()
		if err != nil || len(list) != 2 || !strings.Contains(list[0], "php-"+name) || !strings.Contains(list[1], "php2-"+name) {
			t.Fatalf("%s left %q %v", name, list, err)
		}
	}
}
