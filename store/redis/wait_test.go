package redis

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/worker"
)

// notifyLen is the length of queue's :notify list.
func (e *env) notifyLen(t *testing.T, queue string) int64 {
	t.Helper()
	n, err := e.rc.LLen(e.ctx, prefix+"queues:"+queue+":notify").Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// blocked is how many clients Redis has blocked (BLPOP).
func (e *env) blocked(t *testing.T) int {
	t.Helper()
	info, err := e.rc.Info(e.ctx, "clients").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "blocked_clients:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatal("INFO clients has no blocked_clients")
	return 0
}

// TestIdleWorkerStartsAPushedJobInMilliseconds: a worker with --sleep 10s
// waiting on an empty queue (blocked on its :notify list) starts a job
// pushed as Laravel pushes it within a second, twice in a row, and leaves
// the notify list as Laravel's block_for worker does (push, BLPOP, pop:
// empty).
func TestIdleWorkerStartsAPushedJobInMilliseconds(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	started := make(chan time.Time, 2)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { started <- time.Now(); return nil })
	cfg := workerConfig()
	cfg.Sleep, cfg.StopWhenEmpty = 10*time.Second, false
	w := e.worker(t, reg, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan worker.StopReason, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for round := range 2 {
		testwait.Until(t, 10*time.Second, "the worker blocking on the notify list", func() bool { return e.blocked(t) == 1 })
		pushed := time.Now()
		e.push(t, "", classA)
		at := testwait.Recv(t, started, 8*time.Second, "the pushed job to start (a worker that sleeps --sleep takes 10 s)")
		if took := at.Sub(pushed); took > time.Second {
			t.Fatalf("round %d: the job started %s after its push, want milliseconds", round, took)
		}
		testwait.Until(t, 5*time.Second, "the job to finish", func() bool { return w.Stats().Done == int64(round+1) })
		if n := e.notifyLen(t, "default"); n != 0 {
			t.Fatalf("round %d: the notify list holds %d tokens, Laravel's block_for worker leaves 0", round, n)
		}
	}
}

// TestIdleWorkerWakesForADelayedJobWhenItIsDue: the wait ends when the
// earliest delayed job is due, not after --sleep.
func TestIdleWorkerWakesForADelayedJobWhenItIsDue(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	started := make(chan time.Time, 1)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { started <- time.Now(); return nil })
	if _, err := e.s.Push(e.ctx, jobqueue.PushItem{Payload: built(t, classA), Delay: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	due := time.Now().Add(2 * time.Second)
	cfg := workerConfig()
	cfg.Sleep, cfg.StopWhenEmpty = 10*time.Second, false
	w := e.worker(t, reg, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan worker.StopReason, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	at := testwait.Recv(t, started, 8*time.Second, "the delayed job to start (a worker that sleeps --sleep takes 10 s)")
	if late := at.Sub(due); late > 2*time.Second {
		t.Fatalf("the delayed job started %s after it was due", late)
	}
}

// TestNotifyTokensAfterPushAndClaimAreLaravels: after pushes, claims and
// waits, the notify list holds what Laravel's own workers leave: one
// token per push, one fewer per job popped, one fewer per BLPOP; and a
// token taken for a job of a class Go leaves is given back (as if Go had
// never woken), after which the store stops waiting on that queue, whose
// tokens would wake it again and again.
func TestNotifyTokensAfterPushAndClaimAreLaravels(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	for range 3 {
		e.push(t, "", classA)
	}
	only := jobqueue.ClaimOptions{DisplayNames: []string{classA}}
	if rows, err := e.s.Claim(e.ctx, []string{""}, 2, only); err != nil || len(rows) != 2 {
		t.Fatalf("claimed %d, %v", len(rows), err)
	}
	if n := e.notifyLen(t, "default"); n != 1 {
		t.Fatalf("after 3 pushes and 2 pops the notify list holds %d, Laravel leaves 1", n)
	}
	// The worker waits only after an empty claim; the token left wakes it
	// at once, and the pop that follows takes the job (Laravel: BLPOP, pop).
	if woke, err := e.s.WaitForJob(e.ctx, []string{""}, 5*time.Second); !woke || err != nil {
		t.Fatalf("the wait returned %t, %v with a token in the list", woke, err)
	}
	if rows, err := e.s.Claim(e.ctx, []string{""}, 2, only); err != nil || len(rows) != 1 {
		t.Fatalf("claimed %d, %v", len(rows), err)
	}
	if n := e.notifyLen(t, "default"); n != 0 {
		t.Fatalf("after the BLPOP and the pop the notify list holds %d, Laravel leaves 0", n)
	}

	// A job of a class Go does not run: the token the wait took goes back.
	woke := make(chan error, 1)
	go func() {
		_, err := e.s.WaitForJob(e.ctx, []string{""}, 5*time.Second)
		woke <- err
	}()
	testwait.Until(t, 5*time.Second, "the wait blocking", func() bool { return e.blocked(t) == 1 })
	e.push(t, "", classB)
	if err := testwait.Recv(t, woke, 5*time.Second, "the wait to end on the push"); err != nil {
		t.Fatal(err)
	}
	if rows, err := e.s.Claim(e.ctx, []string{""}, 2, only); err != nil || len(rows) != 0 {
		t.Fatalf("claimed %d, %v", len(rows), err)
	}
	if n := e.notifyLen(t, "default"); n != 1 {
		t.Fatalf("with PHP's job left in the list the notify list holds %d, Laravel (push, no pop) leaves 1", n)
	}
	if _, err := e.s.WaitForJob(e.ctx, []string{""}, 5*time.Second); !errors.Is(err, jobqueue.ErrNotSupported) {
		t.Fatalf("waiting on a queue whose head Go leaves: %v, want ErrNotSupported (poll)", err)
	}
	if n := e.notifyLen(t, "default"); n != 1 {
		t.Fatalf("the notify list holds %d after the refused wait, want 1", n)
	}

	// Once PHP's job is gone (taken here by a claim of its class), the
	// next claim finds no job left in place and the queue is waited on
	// again: a wait blocks, and a push ends it.
	if rows, err := e.s.Claim(e.ctx, []string{""}, 1, jobqueue.ClaimOptions{DisplayNames: []string{classB}}); err != nil || len(rows) != 1 {
		t.Fatalf("claimed PHP's job: %d, %v", len(rows), err)
	}
	if rows, err := e.s.Claim(e.ctx, []string{""}, 2, only); err != nil || len(rows) != 0 {
		t.Fatalf("claimed %d, %v", len(rows), err)
	}
	waited := make(chan error, 1)
	go func() {
		woke, err := e.s.WaitForJob(e.ctx, []string{""}, 5*time.Second)
		if err == nil && !woke {
			err = errors.New("the wait ended without a token")
		}
		waited <- err
	}()
	testwait.Until(t, 5*time.Second, "the wait on the queue no job is left in any more", func() bool { return e.blocked(t) >= 1 })
	e.push(t, "", classA)
	if err := testwait.Recv(t, waited, 5*time.Second, "the wait to end on the push"); err != nil {
		t.Fatalf("waiting on the queue once PHP's job is gone: %v", err)
	}
}

// TestAWaitCutShortHandsItsTokenBack: a wait that ends before its BLPOP
// (a job left, the deadline) leaves the BLPOP running; a token it takes
// then goes back to the list, and the next wait takes it at once.
func TestAWaitCutShortHandsItsTokenBack(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	if woke, err := e.s.WaitForJob(e.ctx, []string{""}, 100*time.Millisecond); woke || err != nil {
		t.Fatalf("the wait on an empty queue returned %t, %v", woke, err)
	}
	if e.blocked(t) != 1 {
		t.Fatal("the BLPOP did not outlive the wait")
	}
	// A push (job and token), as Laravel's: the BLPOP takes the token and,
	// with nobody waiting, gives it back while the job is there.
	e.push(t, "", classA)
	testwait.Until(t, 5*time.Second, "the token handed back", func() bool {
		return e.blocked(t) == 0 && e.notifyLen(t, "default") == 1
	})
	start := time.Now()
	// Well under the wait's 5 s: it returned on the token, not its end
	// (3 s leaves room for a loaded machine under -race).
	if woke, err := e.s.WaitForJob(e.ctx, []string{""}, 5*time.Second); !woke || err != nil || time.Since(start) > 3*time.Second {
		t.Fatalf("the next wait returned %t, %v after %s", woke, err, time.Since(start))
	}
	if n := e.notifyLen(t, "default"); n != 0 {
		t.Fatalf("the notify list holds %d, want the token taken", n)
	}
	// A token whose job is gone (taken by the worker's pop meanwhile) is
	// not given back: Laravel's pop would have taken it with the job.
	e.claim(t, "", 1)
	if woke, err := e.s.WaitForJob(e.ctx, []string{""}, 100*time.Millisecond); woke || err != nil {
		t.Fatalf("the wait on an empty queue returned %t, %v", woke, err)
	}
	if err := e.rc.RPush(e.ctx, prefix+"queues:default:notify", 1).Err(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 5*time.Second, "the BLPOP to take the token", func() bool { return e.blocked(t) == 0 })
	if n := e.notifyLen(t, "default"); n != 0 {
		t.Fatalf("a token for no job was given back: the notify list holds %d", n)
	}
}

// TestAWaitRightAfterACutShortOneTakesItsToken: a push that lands between
// a wait cut short and the next wait is taken by the BLPOP the first left
// running; its token must reach the next wait, whose own BLPOP holds the
// waiter's one connection meanwhile. Round after round, so that the hand
// back and the next BLPOP race in both orders.
func TestAWaitRightAfterACutShortOneTakesItsToken(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	for round := range 40 {
		if woke, err := e.s.WaitForJob(e.ctx, []string{""}, 20*time.Millisecond); woke || err != nil {
			t.Fatalf("round %d: the wait on an empty queue returned %t, %v", round, woke, err)
		}
		e.push(t, "", classA)
		start := time.Now()
		// Well under the wait's 5 s: it returned on the token, not its end.
		if woke, err := e.s.WaitForJob(e.ctx, []string{""}, 5*time.Second); !woke || err != nil || time.Since(start) > 3*time.Second {
			t.Fatalf("round %d: the wait after the push returned %t, %v after %s", round, woke, err, time.Since(start))
		}
		e.claim(t, "", 1)
		if n := e.notifyLen(t, "default"); n != 0 {
			t.Fatalf("round %d: the notify list holds %d after the job was taken, want 0", round, n)
		}
	}
}

// TestWaitOnACluster: on a cluster the wait blocks on a queue's notify
// list (its hash tag's slot) and wakes on a push there; queues of
// different slots cannot share one BLPOP, so the worker polls them.
func TestWaitOnACluster(t *testing.T) {
	cl := testredis.StartCluster(t)
	db := testdb.Open(t, func() appconfig.Config {
		c := testdb.Config(t, appconfig.EngineSQLite)
		c.ConnectionName = "redis"
		return c
	}())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := redisproto.Open(ctx, redisproto.Config{Connection: "redis", Queue: "{default}", RetryAfter: 90 * time.Second,
		Redis: redisproto.RedisConfig{Name: "clustered", Client: "phpredis", Addrs: cl.Addrs, Cluster: true, Prefix: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	s, err := New(q, db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitForJob(ctx, []string{"{mail}", "{reports}"}, time.Second); !errors.Is(err, jobqueue.ErrNotSupported) {
		t.Fatalf("a wait across slots: %v, want ErrNotSupported", err)
	}
	woke := make(chan bool, 1)
	go func() {
		ok, _ := s.WaitForJob(ctx, []string{"{mail}"}, 20*time.Second)
		woke <- ok
	}()
	pushed := time.Now()
	if _, err := s.Push(ctx, jobqueue.PushItem{Queue: "{mail}", Payload: built(t, classA)}); err != nil {
		t.Fatal(err)
	}
	if !testwait.Recv(t, woke, 10*time.Second, "the wait to wake on the push") || time.Since(pushed) > 5*time.Second {
		t.Fatalf("the wait did not wake on the push (%s)", time.Since(pushed))
	}
}
