package redisproto

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// TestPushPopDelete: a pushed job is popped with Laravel's reservation
// (attempts + 1 in the reserved copy, score now + retry_after, its notify
// token consumed) and a delete leaves nothing.
func TestPushPopDelete(t *testing.T) {
	srv := server(t)
	c := newClock()
	q := openQueue(t, testConfig(srv.Addr, "app_database_"), c)
	raw := payloadFor("u-1", "id-1", 0, "")
	ctx := ctxT(t)
	id, err := q.Push(ctx, "", raw)
	if err != nil || id != "id-1" {
		t.Fatalf("push: %q %v", id, err)
	}
	if got := dump(t, srv.Client(t), "app_database_"); got != fmt.Sprintf("queues:default (list): %q\nqueues:default:notify (list): \"1\"\n", raw) {
		t.Fatalf("after push:\n%s", got)
	}
	j := mustPop(t, q, "")
	if string(j.Payload) != string(raw) || j.Attempts != 1 || j.ID != "id-1" || j.UUID != "u-1" || j.Queue != "default" || j.Err != nil {
		t.Fatalf("popped %+v", j)
	}
	if j.ReservedUntil != c.at(90*time.Second) {
		t.Errorf("reserved until %d, want now+90", j.ReservedUntil)
	}
	if !jsonEqual(t, j.Reserved, strings.Replace(string(raw), `"attempts":0`, `"attempts":1`, 1)) {
		t.Errorf("reserved member %s is not the payload with attempts 1", j.Reserved)
	}
	if j.Reserved == string(raw) {
		t.Error("the reserved member is the payload itself; Laravel's is cjson's re-encoding")
	}
	want := fmt.Sprintf("queues:default:reserved (zset): %q@%d\n", j.Reserved, c.at(90*time.Second))
	if got := dump(t, srv.Client(t), "app_database_"); got != want {
		t.Fatalf("after pop:\n%s\nwant\n%s", got, want)
	}
	if lost, err := q.Delete(ctx, j); err != nil || len(lost) != 0 {
		t.Fatalf("delete: %v %v", lost, err)
	}
	if got := dump(t, srv.Client(t), "app_database_"); got != "" {
		t.Fatalf("after delete:\n%s", got)
	}
	if lost, err := q.Delete(ctx, j); err != nil || len(lost) != 1 {
		t.Fatalf("a second delete: lost %v, %v; want the job lost", lost, err)
	}
	if res, err := q.Pop(ctx, "", PopOptions{}); err != nil || len(res.Jobs) != 0 {
		t.Fatalf("pop of an empty queue: %+v %v", res, err)
	}
}

// TestReleaseThenPopCountsAttempts: a release puts the reserved copy
// (attempts counted) in the delayed set at now + delay; it becomes ready
// only at a pop's migration once due, and the next pop counts again.
func TestReleaseThenPopCountsAttempts(t *testing.T) {
	srv := server(t)
	c := newClock()
	q := openQueue(t, testConfig(srv.Addr, "p_"), c)
	ctx := ctxT(t)
	if _, err := q.Push(ctx, "mail", payloadFor("u", "i", 0, "")); err != nil {
		t.Fatal(err)
	}
	first := mustPop(t, q, "mail")
	if err := q.Release(ctx, first, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("queues:mail:delayed (zset): %q@%d\n", first.Reserved, c.at(10*time.Second))
	if got := dump(t, srv.Client(t), "p_"); got != want {
		t.Fatalf("after release:\n%s\nwant\n%s", got, want)
	}
	c.advance(9 * time.Second)
	if res, _ := q.Pop(ctx, "mail", PopOptions{}); len(res.Jobs) != 0 {
		t.Fatal("a job released for 10 s was popped after 9 s")
	}
	c.advance(time.Second)
	second := mustPop(t, q, "mail")
	if second.Attempts != 2 || string(second.Payload) != first.Reserved {
		t.Fatalf("second pop: attempts %d payload %s; want 2 and the first reserved member", second.Attempts, second.Payload)
	}
	if err := q.Release(ctx, second, 0); err != nil {
		t.Fatal(err)
	}
	third := mustPop(t, q, "mail")
	if third.Attempts != 3 {
		t.Fatalf("third pop attempts %d", third.Attempts)
	}
}

// TestMigrationOrderTokensAndBatchSize: due delayed jobs, then expired
// reservations, go to the tail of the list in score order with one token
// each; migration_batch_size bounds each migration.
func TestMigrationOrderTokensAndBatchSize(t *testing.T) {
	srv := server(t)
	c := newClock()
	cfg := testConfig(srv.Addr, "m_")
	cfg.MigrationBatchSize = 2
	q := openQueue(t, cfg, c)
	ctx := ctxT(t)
	rc := srv.Client(t)
	k := cfg.Keys("")
	rc.RPush(ctx, k.Ready, "waiting")
	for i, d := range []int64{-3, -1, -2, 5} {
		rc.ZAdd(ctx, k.Delayed, zmember(c.at(0)+d, fmt.Sprintf("d%d", i)))
	}
	rc.ZAdd(ctx, k.Reserved, zmember(c.at(0)-1, "r-expired"), zmember(c.at(0)+1, "r-running"))
	if err := q.Migrate(ctx, ""); err != nil {
		t.Fatal(err)
	}
	list, _ := rc.LRange(ctx, k.Ready, 0, -1).Result()
	if got := strings.Join(list, ","); got != "waiting,d0,d2,r-expired" {
		t.Fatalf("list after one migration with batch 2: %s", got)
	}
	if n, _ := rc.LLen(ctx, k.Notify).Result(); n != 3 {
		t.Fatalf("%d notify tokens, want 3 (one per migrated job)", n)
	}
	if err := q.Migrate(ctx, ""); err != nil {
		t.Fatal(err)
	}
	list, _ = rc.LRange(ctx, k.Ready, 0, -1).Result()
	if got := strings.Join(list, ","); got != "waiting,d0,d2,r-expired,d1" {
		t.Fatalf("list after the second migration: %s", got)
	}
	if d, _ := rc.ZRange(ctx, k.Delayed, 0, -1).Result(); strings.Join(d, ",") != "d3" {
		t.Fatalf("delayed left: %v", d)
	}
	if r, _ := rc.ZRange(ctx, k.Reserved, 0, -1).Result(); strings.Join(r, ",") != "r-running" {
		t.Fatalf("reserved left: %v", r)
	}
}

// TestLostReservationWritesNothing: a job running past retry_after is
// moved back and popped again by another worker; the first worker's
// delete, release, extend and unreserve all report it lost and change
// nothing.
func TestLostReservationWritesNothing(t *testing.T) {
	srv := server(t)
	c := newClock()
	cfg := testConfig(srv.Addr, "f_")
	goQ := openQueue(t, cfg, c)
	other := openQueue(t, cfg, c)
	ctx := ctxT(t)
	if _, err := goQ.Push(ctx, "", payloadFor("u", "i", 0, "")); err != nil {
		t.Fatal(err)
	}
	stale := mustPop(t, goQ, "")
	c.advance(90 * time.Second)
	again := mustPop(t, other, "")
	if again.Attempts != 2 || string(again.Payload) != stale.Reserved {
		t.Fatalf("the other worker popped %+v", again)
	}
	before := dump(t, srv.Client(t), "f_")
	if lost, err := goQ.Delete(ctx, stale); err != nil || len(lost) != 1 {
		t.Errorf("delete: lost %v err %v", lost, err)
	}
	if err := goQ.Release(ctx, stale, 0); !errors.Is(err, ErrReservationLost) || !errors.Is(err, jobqueue.ErrReservationLost) {
		t.Errorf("release: %v", err)
	}
	if got, err := goQ.Extend(ctx, stale); err != nil || len(got) != 0 {
		t.Errorf("extend: %v %v", got, err)
	}
	if lost, err := goQ.Unreserve(ctx, stale); err != nil || len(lost) != 1 {
		t.Errorf("unreserve: %v %v", lost, err)
	}
	if err := goQ.Complete(ctx, stale, jobqueue.PushItem{Payload: payloadFor("n", "n", 0, "")}); !errors.Is(err, ErrReservationLost) {
		t.Errorf("complete: %v", err)
	}
	if after := dump(t, srv.Client(t), "f_"); after != before {
		t.Fatalf("a lost job's writes changed Redis:\nbefore\n%s\nafter\n%s", before, after)
	}
	if lost, err := other.Delete(ctx, again); err != nil || len(lost) != 0 {
		t.Fatalf("the holder's delete: %v %v", lost, err)
	}
}

// TestUnreserveRestoresTheQueue: jobs popped together and given back are
// where they were, as pushed (attempts not counted), with their tokens.
func TestUnreserveRestoresTheQueue(t *testing.T) {
	srv := server(t)
	c := newClock()
	q := openQueue(t, testConfig(srv.Addr, "u_"), c)
	ctx := ctxT(t)
	for i := range 5 {
		if _, err := q.Push(ctx, "", payloadFor(fmt.Sprint("u", i), fmt.Sprint("i", i), 0, "")); err != nil {
			t.Fatal(err)
		}
	}
	before := dump(t, srv.Client(t), "u_")
	res, err := q.Pop(ctx, "", PopOptions{Max: 3})
	if err != nil || len(res.Jobs) != 3 {
		t.Fatalf("pop 3: %+v %v", res, err)
	}
	if lost, err := q.Unreserve(ctx, res.Jobs...); err != nil || len(lost) != 0 {
		t.Fatalf("unreserve: %v %v", lost, err)
	}
	if after := dump(t, srv.Client(t), "u_"); after != before {
		t.Fatalf("unreserve did not restore the queue:\nbefore\n%s\nafter\n%s", before, after)
	}
	j := mustPop(t, q, "")
	if j.UUID != "u0" || j.Attempts != 1 {
		t.Fatalf("the next pop got %s attempt %d, want u0 attempt 1", j.UUID, j.Attempts)
	}
}

// TestExtendKeepsARunningJob: an extended reservation is not migrated at
// the old expiry; a refresh never shortens a reservation.
func TestExtendKeepsARunningJob(t *testing.T) {
	srv := server(t)
	c := newClock()
	cfg := testConfig(srv.Addr, "e_")
	q := openQueue(t, cfg, c)
	ctx := ctxT(t)
	if _, err := q.Push(ctx, "", payloadFor("u", "i", 0, "")); err != nil {
		t.Fatal(err)
	}
	j := mustPop(t, q, "")
	c.advance(60 * time.Second)
	got, err := q.Extend(ctx, j)
	if err != nil || len(got) != 1 || got[0].ReservedUntil != c.at(90*time.Second) || got[0].Reserved != j.Reserved {
		t.Fatalf("extend: %+v %v", got, err)
	}
	c.advance(40 * time.Second) // past the pop's expiry, before the extended one
	if res, _ := q.Pop(ctx, "", PopOptions{}); len(res.Jobs) != 0 {
		t.Fatal("an extended job was migrated at its old expiry")
	}
	c.unix.Add(-100)
	if again, err := q.Extend(ctx, got[0]); err != nil || len(again) != 1 || again[0].ReservedUntil != got[0].ReservedUntil {
		t.Fatalf("an extend with an earlier clock: %+v %v; want the reservation kept", again, err)
	}
	score, _ := srv.Client(t).ZScore(ctx, cfg.Keys("").Reserved, j.Reserved).Result()
	if int64(score) != got[0].ReservedUntil {
		t.Fatalf("score %v, want %d", score, got[0].ReservedUntil)
	}
}

// TestPopFilterLeavesForeignHead: with Only, a head of another class is
// left (put back in the same script) and named; the state is untouched. Jobs of the listed class
// ahead of it are popped.
func TestPopFilterLeavesForeignHead(t *testing.T) {
	srv := server(t)
	c := newClock()
	q := openQueue(t, testConfig(srv.Addr, "x_"), c)
	ctx := ctxT(t)
	mine := payloadFor("mine", "m", 0, "")
	foreign := []byte(strings.ReplaceAll(string(payloadFor("theirs", "t", 0, "")), `NoopJob`, `PhpOnly`))
	for _, p := range [][]byte{mine, foreign, mine} {
		if _, err := q.Push(ctx, "", p); err != nil {
			t.Fatal(err)
		}
	}
	res, err := q.Pop(ctx, "", PopOptions{Max: 5, Only: []string{`App\Jobs\NoopJob`}})
	if err != nil || len(res.Jobs) != 1 || res.Head == nil || res.Head.DisplayName != `App\Jobs\PhpOnly` || res.Head.UUID != "theirs" {
		t.Fatalf("pop: %+v %v", res, err)
	}
	before := dump(t, srv.Client(t), "x_")
	only := []string{`App\Jobs\NoopJob`}
	res, err = q.Pop(ctx, "", PopOptions{Max: 5, Only: only})
	if err != nil || len(res.Jobs) != 0 || res.Head == nil {
		t.Fatalf("second pop: %+v %v", res, err)
	}
	if after := dump(t, srv.Client(t), "x_"); after != before {
		t.Fatalf("a pop stopped at a foreign head changed Redis:\n%s\n%s", before, after)
	}
	// The queue keeps the last filter's rendering: a caller that writes
	// another class into the slice it passed pops that class.
	only[0] = `App\Jobs\PhpOnly`
	res, err = q.Pop(ctx, "", PopOptions{Max: 5, Only: only})
	if err != nil || len(res.Jobs) != 1 || res.Jobs[0].UUID != "theirs" {
		t.Fatalf("pop of the class written into the same slice: %+v %v", res, err)
	}
}

// TestMalformedJobsAreReservedNotLost: payloads Laravel's pop cannot read
// (it loses them) are reserved under their raw bytes and returned with
// the cause; a delete removes them.
func TestMalformedJobsAreReservedNotLost(t *testing.T) {
	srv := server(t)
	c := newClock()
	cfg := testConfig(srv.Addr, "h_")
	q := openQueue(t, cfg, c)
	ctx := ctxT(t)
	rc := srv.Client(t)
	hostile := []string{`not json`, `[1,2]`, `"str"`, `{"uuid":"x"}`, `{"attempts":"many"}`, `null`, `{"attempts":1e400}`}
	for _, h := range hostile {
		rc.RPush(ctx, cfg.Keys("").Ready, h)
	}
	if _, err := q.Push(ctx, "", payloadFor("ok", "ok", 0, "")); err != nil {
		t.Fatal(err)
	}
	res, err := q.Pop(ctx, "", PopOptions{Max: 20, Only: []string{`App\Jobs\NoopJob`}})
	if err != nil || len(res.Jobs) != len(hostile)+1 {
		t.Fatalf("pop: %d jobs, %v", len(res.Jobs), err)
	}
	for i, h := range hostile {
		j := res.Jobs[i]
		var m *MalformedError
		if !errors.As(j.Err, &m) || j.Reserved != h || string(j.Payload) != h {
			t.Errorf("hostile %q popped as %+v", h, j)
		}
	}
	if ok := res.Jobs[len(hostile)]; ok.Err != nil || ok.UUID != "ok" {
		t.Errorf("the good job after them: %+v", ok)
	}
	if n, _ := rc.ZCard(ctx, cfg.Keys("").Reserved).Result(); n != int64(len(hostile)+1) {
		t.Fatalf("%d reserved, want all %d", n, len(hostile)+1)
	}
	if lost, err := q.Delete(ctx, res.Jobs...); err != nil || len(lost) != 0 {
		t.Fatalf("delete: %v %v", lost, err)
	}
	if got := dump(t, rc, "h_"); got != "" {
		t.Fatalf("left: %s", got)
	}
}

// TestCopiesOfAReservedJobWait: a payload pushed twice (byte for byte,
// readable or not) would be reserved twice under one member, so that
// settling one copy would settle the other. The pop leaves the second
// copy at the head untouched (Head.Copy), takes the job behind it, and
// pops the copy once the first copy's reservation is gone; each copy is
// then settled on its own.
func TestCopiesOfAReservedJobWait(t *testing.T) {
	for name, raw := range map[string]string{"readable": string(payloadFor("twice", "id-twice", 0, "")), "unreadable": "not json, twice"} {
		t.Run(name, func(t *testing.T) {
			srv := server(t)
			c := newClock()
			cfg := testConfig(srv.Addr, "c_")
			q := openQueue(t, cfg, c)
			ctx := ctxT(t)
			rc := srv.Client(t)
			k := cfg.Keys("")
			for range 2 {
				rc.RPush(ctx, k.Ready, raw)
				rc.RPush(ctx, k.Notify, 1)
			}
			if _, err := q.Push(ctx, "", payloadFor("after", "id-after", 0, "")); err != nil {
				t.Fatal(err)
			}
			before := dump(t, rc, "c_")
			res, err := q.Pop(ctx, "", PopOptions{Max: 5})
			if err != nil || len(res.Jobs) != 2 || res.Jobs[1].UUID != "after" || res.Head == nil || !res.Head.Copy {
				t.Fatalf("pop: %d jobs, head %+v, %v; want the first copy, the job behind the second, and the second left as a copy", len(res.Jobs), res.Head, err)
			}
			first := res.Jobs[0]
			again, err := q.Pop(ctx, "", PopOptions{Max: 5})
			if err != nil || len(again.Jobs) != 0 || again.Head == nil || !again.Head.Copy {
				t.Fatalf("pop while the first copy is reserved: %+v %v", again, err)
			}
			list, _ := rc.LRange(ctx, k.Ready, 0, -1).Result()
			if len(list) != 1 || list[0] != raw {
				t.Fatalf("list %q: the copy must stay at the head, untouched", list)
			}
			if n, _ := rc.LLen(ctx, k.Notify).Result(); n != 1 {
				t.Fatalf("%d notify tokens, want 1 (one per job left)", n)
			}
			if lost, err := q.Delete(ctx, first, res.Jobs[1]); err != nil || len(lost) != 0 {
				t.Fatalf("delete of the first copy and the job after: %v %v", lost, err)
			}
			res, err = q.Pop(ctx, "", PopOptions{Max: 5})
			if err != nil || len(res.Jobs) != 1 || res.Head != nil || res.Jobs[0].Reserved != first.Reserved {
				t.Fatalf("pop after the first copy's delete: %+v %v; want the second copy (same member)", res, err)
			}
			if lost, err := q.Delete(ctx, res.Jobs...); err != nil || len(lost) != 0 {
				t.Fatalf("delete of the second copy: %v %v", lost, err)
			}
			if got := dump(t, rc, "c_"); got != "" {
				t.Fatalf("left after both copies (state before the first pop:\n%s):\n%s", before, got)
			}
		})
	}
}

// TestBlockingPopWakesOnPush: an empty pop with block_for waits on the
// notify list and returns the job pushed meanwhile; without a push it
// returns empty after block_for; with block_for 0 it ends with ctx.
func TestBlockingPopWakesOnPush(t *testing.T) {
	srv := server(t)
	cfg := testConfig(srv.Addr, "b_")
	block := 5 * time.Second
	cfg.BlockFor = &block
	q := openQueue(t, cfg, nil)
	pusher := openQueue(t, cfg, nil)
	ctx := ctxT(t)
	type result struct {
		res PopResult
		err error
	}
	done := make(chan result, 1)
	started := time.Now()
	go func() {
		res, err := q.Pop(ctx, "", PopOptions{Block: true})
		done <- result{res, err}
	}()
	// Push once the pop is blocked: its BLPOP shows in CLIENT LIST.
	waitUntil(t, 5*time.Second, "the pop to block", func() bool {
		list, _ := srv.Client(t).ClientList(ctx).Result()
		return strings.Contains(list, "cmd=blpop")
	})
	if _, err := pusher.Push(ctx, "", payloadFor("woke", "w", 0, "")); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || len(r.res.Jobs) != 1 || r.res.Jobs[0].UUID != "woke" {
			t.Fatalf("blocking pop: %+v %v", r.res, r.err)
		}
		if time.Since(started) > 4*time.Second {
			t.Fatalf("the pop woke after %s", time.Since(started))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking pop did not wake on the push")
	}

	short := time.Second
	cfg.BlockFor = &short
	q2 := openQueue(t, cfg, nil)
	started = time.Now()
	res, err := q2.Pop(ctx, "", PopOptions{Block: true})
	if err != nil || len(res.Jobs) != 0 || time.Since(started) < 900*time.Millisecond {
		t.Fatalf("block_for 1 on an empty queue: %+v %v after %s", res, err, time.Since(started))
	}

	forever := time.Duration(0)
	cfg.BlockFor = &forever
	q3 := openQueue(t, cfg, nil)
	cctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	_, err = q3.Pop(cctx, "", PopOptions{Block: true})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("block_for 0 ended with %v, want the context's deadline", err)
	}
}

// TestPrefixAndDatabase: keys carry the connection prefix (never the
// values); another prefix or database is another queue.
func TestPrefixAndDatabase(t *testing.T) {
	srv := server(t)
	c := newClock()
	a := openQueue(t, testConfig(srv.Addr, "laravel_database_"), c)
	other := testConfig(srv.Addr, "other_")
	b := openQueue(t, other, c)
	db1 := testConfig(srv.Addr, "laravel_database_")
	db1.Redis.DB = 1
	d := openQueue(t, db1, c)
	ctx := ctxT(t)
	if _, err := a.Push(ctx, "emails", payloadFor("u", "i", 0, "")); err != nil {
		t.Fatal(err)
	}
	keys, _ := srv.Client(t).Keys(ctx, "*").Result()
	if strings.Join(sorted(keys), ",") != "laravel_database_queues:emails,laravel_database_queues:emails:notify" {
		t.Fatalf("keys %v", keys)
	}
	for _, q := range []*Queue{b, d} {
		if res, _ := q.Pop(ctx, "emails", PopOptions{}); len(res.Jobs) != 0 {
			t.Fatalf("%s popped another prefix's or database's job", q.Config().Redis)
		}
	}
	j := mustPop(t, a, "emails")
	if strings.Contains(j.Reserved, "laravel_database_") {
		t.Fatal("the prefix reached a value")
	}
}

// TestCompletePushesFollowups: a fenced delete with the next jobs, pushed
// ready or delayed, only while the reservation holds.
func TestCompletePushesFollowups(t *testing.T) {
	srv := server(t)
	c := newClock()
	cfg := testConfig(srv.Addr, "c_")
	q := openQueue(t, cfg, c)
	ctx := ctxT(t)
	if _, err := q.Push(ctx, "", payloadFor("u", "i", 0, "")); err != nil {
		t.Fatal(err)
	}
	j := mustPop(t, q, "")
	next := payloadFor("n", "n", 0, "")
	later := payloadFor("l", "l", 0, "")
	if err := q.Complete(ctx, j, jobqueue.PushItem{Queue: "chains", Payload: next}, jobqueue.PushItem{Queue: "chains", Payload: later, Delay: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("queues:chains (list): %q\nqueues:chains:delayed (zset): %q@%d\nqueues:chains:notify (list): \"1\"\n", next, later, c.at(30*time.Second))
	if got := dump(t, srv.Client(t), "c_"); got != want {
		t.Fatalf("after complete:\n%s\nwant\n%s", got, want)
	}
	if err := q.Complete(ctx, &Job{Queue: "default", Reserved: "x"}, jobqueue.PushItem{Payload: []byte(`{"no":"attempts"}`)}); !errors.Is(err, ErrBadPayload) {
		t.Fatalf("a follow-up without attempts: %v", err)
	}
}

// TestCountsSizeClear: Laravel's size counts running jobs; Counts splits
// them and says what the next pop can find; clear drops everything.
func TestCountsSizeClear(t *testing.T) {
	srv := server(t)
	c := newClock()
	q := openQueue(t, testConfig(srv.Addr, "s_"), c)
	ctx := ctxT(t)
	for i := range 3 {
		if _, err := q.Push(ctx, "", payloadFor(fmt.Sprint(i), fmt.Sprint(i), 0, "")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Later(ctx, "", payloadFor("d", "d", 0, ""), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Later(ctx, "", payloadFor("due", "due", 0, ""), 0); err != nil {
		t.Fatal(err)
	}
	res, err := q.Pop(ctx, "", PopOptions{Max: 1, Exact: true})
	if err != nil || len(res.Jobs) != 1 {
		t.Fatal(err)
	}
	n, err := q.Size(ctx, "")
	if err != nil || n != 5 {
		t.Fatalf("size %d %v, want 5", n, err)
	}
	counts, err := q.Counts(ctx, "")
	if err != nil || counts != (Counts{Ready: 3, Delayed: 1, DelayedDue: 0, Reserved: 1}) || counts.Poppable() != 3 {
		t.Fatalf("counts %+v %v", counts, err)
	}
	c.advance(90 * time.Second)
	if counts, _ = q.Counts(ctx, ""); counts.Poppable() != 5 {
		t.Fatalf("after 90 s: %+v", counts)
	}
	if n, err := q.Clear(ctx, ""); err != nil || n != 5 {
		t.Fatalf("clear %d %v", n, err)
	}
	if got := dump(t, srv.Client(t), "s_"); got != "" {
		t.Fatalf("after clear: %s", got)
	}
}

// TestPushRefusesPayloadsThePopWouldLose.
func TestPushRefusesPayloadsThePopWouldLose(t *testing.T) {
	srv := server(t)
	q := openQueue(t, testConfig(srv.Addr, "v_"), nil)
	for _, p := range []string{`{"uuid":"x"}`, `[]`, `nope`, `{"attempts":"many"}`, `{"attempts":null}`} {
		if _, err := q.Push(ctxT(t), "", []byte(p)); !errors.Is(err, ErrBadPayload) {
			t.Errorf("push %s: %v", p, err)
		}
	}
	if got := dump(t, srv.Client(t), "v_"); got != "" {
		t.Fatalf("refused pushes wrote: %s", got)
	}
}

// TestNeverExpire: with retryAfter null (Horizon's `'retry_after' =>
// null`) a reservation is scored now and never moved back, while delayed
// jobs still migrate.
func TestNeverExpire(t *testing.T) {
	srv := server(t)
	c := newClock()
	cfg := testConfig(srv.Addr, "n_")
	cfg.NeverExpire = true
	ctx := ctxT(t)
	for _, exact := range []bool{false, true} {
		q := openQueue(t, cfg, c)
		if _, err := q.Push(ctx, "", payloadFor("u", "i", 0, "")); err != nil {
			t.Fatal(err)
		}
		j, err := q.Pop(ctx, "", PopOptions{Exact: exact})
		if err != nil || len(j.Jobs) != 1 || j.Jobs[0].ReservedUntil != c.at(0) {
			t.Fatalf("pop: %+v %v", j, err)
		}
		if _, err := q.Later(ctx, "", payloadFor("d", "d", 0, ""), time.Second); err != nil {
			t.Fatal(err)
		}
		c.advance(time.Hour)
		res, err := q.Pop(ctx, "", PopOptions{Max: 5, Exact: exact})
		if err != nil || len(res.Jobs) != 1 || res.Jobs[0].UUID != "d" {
			t.Fatalf("exact %t: after an hour: %+v %v; want only the delayed job", exact, res, err)
		}
		if _, err := q.Delete(ctx, j.Jobs[0], res.Jobs[0]); err != nil {
			t.Fatal(err)
		}
	}
}
