package redisproto

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestPopLeavesGivenBackJobs: a job whose id the caller lists in LeaveIDs
// is left at the head, untouched, as a foreign class is; the jobs ahead of
// it and behind it are popped, and a pop without the id takes it.
func TestPopLeavesGivenBackJobs(t *testing.T) {
	srv := server(t)
	q := openQueue(t, testConfig(srv.Addr, "l_"), newClock())
	ctx := ctxT(t)
	for _, id := range []string{"a", "back", "c"} {
		if _, err := q.Push(ctx, "", payloadFor("u-"+id, id, 0, "")); err != nil {
			t.Fatal(err)
		}
	}
	res, err := q.Pop(ctx, "", PopOptions{Max: 5, LeaveIDs: []string{"back"}})
	if err != nil || len(res.Jobs) != 2 || res.Jobs[0].ID != "a" || res.Jobs[1].ID != "c" || res.Head == nil || !res.Head.ByID || res.Head.UUID != "u-back" {
		t.Fatalf("pop: %+v %v", res, err)
	}
	before := dump(t, srv.Client(t), "l_")
	res, err = q.Pop(ctx, "", PopOptions{Max: 5, LeaveIDs: []string{"back"}, Only: []string{`App\Jobs\NoopJob`}})
	if err != nil || len(res.Jobs) != 0 || res.Head == nil || !res.Head.ByID || len(res.Looked) != 0 || res.LookaheadCut {
		t.Fatalf("second pop: %+v %v", res, err)
	}
	if after := dump(t, srv.Client(t), "l_"); after != before {
		t.Fatalf("a pop stopped at a left job changed Redis:\n%s\n%s", before, after)
	}
	res, err = q.Pop(ctx, "", PopOptions{Max: 5})
	if err != nil || len(res.Jobs) != 1 || res.Jobs[0].ID != "back" {
		t.Fatalf("pop without LeaveIDs: %+v %v", res, err)
	}
}

// TestBlockedPopHandsTheTokenOn: a blocking pop woken for a job it leaves
// in place (a foreign class) puts the notify token back, so a PHP worker
// blocked on the queue still wakes for it.
func TestBlockedPopHandsTheTokenOn(t *testing.T) {
	srv := server(t)
	cfg := testConfig(srv.Addr, "b_")
	block := 5 * time.Second
	cfg.BlockFor = &block
	q := openQueue(t, cfg, nil)
	ctx := ctxT(t)
	rc := srv.Client(t)
	done := make(chan PopResult, 1)
	errc := make(chan error, 1)
	go func() {
		res, err := q.Pop(ctx, "", PopOptions{Block: true, Only: []string{`App\Jobs\Mine`}})
		done <- res
		errc <- err
	}()
	waitUntil(t, 5*time.Second, "the pop to block", func() bool {
		clients, _ := rc.ClientList(ctx).Result()
		return strings.Contains(clients, "cmd=blpop")
	})
	if _, err := q.Push(ctx, "", payloadFor("theirs", "t", 0, "")); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if err := <-errc; err != nil || len(res.Jobs) != 0 || res.Head == nil || res.Head.UUID != "theirs" {
			t.Fatalf("pop: %+v %v", res, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking pop did not return")
	}
	if n, _ := rc.LLen(ctx, cfg.Keys("").Notify).Result(); n != 1 {
		t.Fatalf("notify list holds %d tokens after the pop left the job, want 1", n)
	}
}

// TestResetAttempts: queue:retry's reset changes the "attempts" value
// only, wherever it is and however it is spaced.
func TestResetAttempts(t *testing.T) {
	for in, want := range map[string]string{
		`{"uuid":"u","attempts":3,"id":"x"}`:         `{"uuid":"u","attempts":0,"id":"x"}`,
		`{"attempts" : 12 , "b":[1,{"attempts":4}]}`: `{"attempts" : 0 , "b":[1,{"attempts":4}]}`,
		`{"a":1,"attempts":"7"}`:                     `{"a":1,"attempts":0}`,
		`{"uuid":"no attempts"}`:                     `{"uuid":"no attempts"}`,
	} {
		got, err := ResetAttempts([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("ResetAttempts(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := ResetAttempts([]byte(`[1]`)); !errors.Is(err, ErrBadPayload) {
		t.Errorf("a JSON list: %v", err)
	}
}

// TestMoveAndCountClasses: Move takes the ready and delayed jobs of the
// classes (case ignored) to the other queue, in order, delayed ones with
// their due time, and leaves reserved ones and other classes; the notify
// tokens follow the jobs. CountClasses and Queues see the result.
func TestMoveAndCountClasses(t *testing.T) {
	srv := server(t)
	c := newClock()
	cfg := testConfig(srv.Addr, "m_")
	q := openQueue(t, cfg, c)
	ctx := ctxT(t)
	rc := srv.Client(t)
	other := func(uuid string) []byte {
		return []byte(strings.ReplaceAll(string(payloadFor(uuid, uuid, 0, "")), `NoopJob`, `Other`))
	}
	for _, p := range [][]byte{payloadFor("n1", "n1", 0, ""), other("o1"), payloadFor("n2", "n2", 0, ""), payloadFor("run", "run", 0, "")} {
		if _, err := q.Push(ctx, "src", p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Later(ctx, "src", payloadFor("d1", "d1", 0, ""), time.Minute); err != nil {
		t.Fatal(err)
	}
	// "n1" is popped and reserved: it must stay.
	if j := mustPop(t, q, "src"); j.UUID != "n1" {
		t.Fatalf("popped %s", j.UUID)
	}
	counts, err := q.CountClasses(ctx, "src", []string{`app\jobs\noopjob`, `App\Jobs\Other`, `App\Jobs\None`})
	if err != nil {
		t.Fatal(err)
	}
	want := []ClassCount{{`app\jobs\noopjob`, 2, 1, 1}, {`App\Jobs\Other`, 1, 0, 0}, {`App\Jobs\None`, 0, 0, 0}}
	for i := range want {
		if counts[i] != want[i] {
			t.Errorf("counts[%d] = %+v, want %+v", i, counts[i], want[i])
		}
	}
	moved, err := q.Move(ctx, "src", "dst", []string{`App\Jobs\NOOPJOB`})
	if err != nil || moved[`App\Jobs\NOOPJOB`] != 3 {
		t.Fatalf("moved %v, %v", moved, err)
	}
	got := dump(t, rc, "m_")
	for _, part := range []string{
		`queues:dst:delayed (zset):`, `@1700000060`, `queues:dst:notify (list): "1" "1"` + "\n",
		`queues:src:notify (list): "1"` + "\n", `queues:src:reserved (zset):`,
	} {
		if !strings.Contains(got, part) {
			t.Errorf("after the move, Redis lacks %q:\n%s", part, got)
		}
	}
	if list, _ := rc.LRange(ctx, cfg.Keys("src").Ready, 0, -1).Result(); len(list) != 1 || !strings.Contains(list[0], `"o1"`) {
		t.Errorf("source list %q, want only the other class", list)
	}
	if list, _ := rc.LRange(ctx, cfg.Keys("dst").Ready, 0, -1).Result(); len(list) != 2 || !strings.Contains(list[1], `"run"`) {
		t.Errorf("target list %q, want n2 then run", list)
	}
	if n, _ := rc.ZCard(ctx, cfg.Keys("src").Reserved).Result(); n != 1 {
		t.Errorf("the reserved job was touched: %d reserved", n)
	}
	names, err := q.Queues(ctx)
	if err != nil || strings.Join(names, ",") != "dst,src" {
		t.Fatalf("queues %v %v", names, err)
	}
	if _, err := q.Move(ctx, "src", "src", []string{"x"}); err == nil {
		t.Error("a move onto the same queue was accepted")
	}
}

// TestAPopOutlivesItsContext: a pop sent before its context ends is
// waited for: the job it reserved is returned, not left reserved unseen
// until retry_after (a worker stopping while Redis is slow to answer).
func TestAPopOutlivesItsContext(t *testing.T) {
	srv := server(t)
	cfg := testConfig(srv.Addr, "p_")
	q := openQueue(t, cfg, nil)
	if _, err := q.Push(ctxT(t), "", payloadFor("u", "i", 0, "")); err != nil {
		t.Fatal(err)
	}
	// Redis holds scripts for 700 ms; the pop's context ends after 200.
	if err := srv.Client(t).Do(ctxT(t), "client", "pause", 700, "write").Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := q.Pop(ctx, "", PopOptions{})
	if err != nil || len(res.Jobs) != 1 {
		t.Fatalf("pop: %+v %v", res, err)
	}
	if n, _ := srv.Client(t).ZCard(ctxT(t), cfg.Keys("").Reserved).Result(); n != 1 {
		t.Fatalf("%d reserved", n)
	}
}
