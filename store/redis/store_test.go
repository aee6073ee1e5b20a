package redis

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
)

// TestClaimGivesJobsAsLaravelsPop: a claim pops as Laravel does (attempt
// counted in the reserved member, reserved for retry_after); the row
// carries the list's payload, the member as its reservation and ids
// unique within the store.
func TestClaimGivesJobsAsLaravelsPop(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	for range 3 {
		e.push(t, "", classA)
	}
	listed := e.list(t, "default")
	before := time.Now().Unix()
	rows := e.claim(t, "", 3)
	reserved := e.reserved(t, "default")
	if len(reserved) != 3 {
		t.Fatalf("reserved set %v", reserved)
	}
	scores := map[string]float64{}
	for _, z := range reserved {
		scores[z.Member.(string)] = z.Score
	}
	seen := map[int64]bool{}
	for i, r := range rows {
		if string(r.Payload) != listed[i] || r.Attempts != 1 || r.Queue != "default" || seen[r.ID] {
			t.Fatalf("row %d: %+v", i, r)
		}
		seen[r.ID] = true
		score, ok := scores[r.Reservation]
		if !ok || field(t, r.Reservation, "attempts") != 1.0 || field(t, r.Reservation, "uuid") != field(t, listed[i], "uuid") {
			t.Fatalf("row %d's reservation %q is not its reserved member", i, r.Reservation)
		}
		if *r.ReservedAt < before || *r.ReservedAt > time.Now().Unix() || int64(score) != *r.ReservedAt+90 {
			t.Fatalf("row %d reserved at %d, score %v", i, *r.ReservedAt, score)
		}
	}
	if n, err := e.s.CountClaimable(e.ctx, []string{""}, jobqueue.ClaimOptions{}); err != nil || n != 0 {
		t.Fatalf("claimable after the claim: %d %v", n, err)
	}
}

// TestFinishWithFollowup: Finish deletes the job, pushes its chain's next
// link (as dispatch() writes it: id and attempts 0) and records the
// batch's success. With the reservation lost it writes none of them:
// the conformance suite's WritesAfterTheJobFinishedElsewhereAreFenced.
func TestFinishWithFollowup(t *testing.T) {
	forEachEngine(t, envOptions{}, func(t *testing.T, e *env) {
		e.insertBatch(t, fixtureBatchID, 3, []byte("a:0:{}"))
		next := &jobqueue.PushItem{Queue: "chains", Payload: built(t, classA), Delay: 0}
		followup := func(uuid string) jobqueue.Followup {
			return jobqueue.Followup{Next: next, Batch: &jobqueue.BatchEntry{ID: fixtureBatchID, JobUUID: uuid}}
		}
		uuid := e.push(t, "", classA)
		row := e.claim(t, "", 1)[0]
		if err := e.s.Finish(e.ctx, row, followup(uuid)); err != nil {
			t.Fatal(err)
		}
		links := e.list(t, "chains")
		if len(links) != 1 || field(t, links[0], "attempts") != 0.0 || len(field(t, links[0], "id").(string)) != 32 {
			t.Fatalf("chain link %q", links)
		}
		if len(e.reserved(t, "default")) != 0 {
			t.Fatal("the finished job is still reserved")
		}
		if b := e.batch(t, fixtureBatchID); b.PendingJobs != 2 {
			t.Fatalf("batch pending %d, want 2", b.PendingJobs)
		}
	})
}

// TestFailWithBatch: Fail writes the failed_jobs row (connection redis,
// the list's payload), deletes the job and counts the failure in the
// batch (cancelling it). With the reservation lost it writes nothing: the
// conformance suite's WritesAfterALostReservationAreFenced.
func TestFailWithBatch(t *testing.T) {
	forEachEngine(t, envOptions{}, func(t *testing.T, e *env) {
		e.insertBatch(t, fixtureBatchID, 3, []byte("a:0:{}"))
		uuid := e.push(t, "mail", classA)
		row := e.claim(t, "mail", 1)[0]
		entry := &jobqueue.BatchEntry{ID: fixtureBatchID, JobUUID: uuid}
		if err := e.s.Fail(e.ctx, row, uuid, "RuntimeException: boom", jobqueue.Followup{Batch: entry}); err != nil {
			t.Fatal(err)
		}
		failed := e.failed(t)
		if len(failed) != 1 || failed[0].UUID != uuid || failed[0].Connection != "redis" || failed[0].Queue != "mail" ||
			failed[0].Payload != string(row.Payload) || failed[0].Exception != "RuntimeException: boom" {
			t.Fatalf("failed rows %+v", failed)
		}
		if len(e.reserved(t, "mail")) != 0 {
			t.Fatal("the failed job is still reserved")
		}
		if b := e.batch(t, fixtureBatchID); b.FailedJobs != 1 || !b.Cancelled() || len(b.FailedJobIDs) != 1 || b.FailedJobIDs[0] != uuid {
			t.Fatalf("batch %+v", b)
		}
	})
}

// TestFailTakesItsRowBackWhenTheDeleteFindsTheJobGone: the reservation
// is lost between the failed_jobs row and the delete (queue:clear ran):
// the row is deleted again and the failure reported lost.
func TestFailTakesItsRowBackWhenTheDeleteFindsTheJobGone(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	uuid := e.push(t, "", classA)
	row := e.claim(t, "", 1)[0]
	e.s.testAfterFailedRow = func() {
		if n := len(e.failed(t)); n != 1 {
			t.Errorf("%d failed rows before the delete", n)
		}
		if _, err := e.q.Clear(e.ctx, ""); err != nil {
			t.Error(err)
		}
	}
	if err := e.s.Fail(e.ctx, row, uuid, "boom", jobqueue.Followup{}); !errors.Is(err, jobqueue.ErrReservationLost) {
		t.Fatalf("fail: %v", err)
	}
	if n := len(e.failed(t)); n != 0 {
		t.Fatalf("%d failed rows left", n)
	}
}

// TestACopyFailsInARowOfItsOwn: a payload pushed twice is reserved by
// two claims under one member, the second once the first's is gone. A
// claim of the second copy that lands while the first copy's Fail is
// between its delete in Redis and its end (the first's failed_jobs row
// written, its member removed) writes a failed_jobs row of its own: the
// first copy's write is not taken for an earlier try of the second's.
func TestACopyFailsInARowOfItsOwn(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	uuid := e.push(t, "", classA)
	raw := e.list(t, "default")[0]
	k := e.q.Config().Keys("")
	e.rc.RPush(e.ctx, k.Ready, raw)
	e.rc.RPush(e.ctx, k.Notify, 1)
	first := e.claim(t, "", 1)[0]
	// The first copy's Fail, up to its delete in Redis.
	w := e.s.begin(first)
	w.fw.Sure, w.fw.UUID = true, uuid
	if _, err := e.db.RecordFailed(e.ctx, first.Queue, first.Payload, uuid, "first copy"); err != nil {
		t.Fatal(err)
	}
	if lost, err := e.q.Delete(e.ctx, job(first)); err != nil || len(lost) != 0 {
		t.Fatal(lost, err)
	}
	second := e.claim(t, "", 1)[0]
	if second.Reservation != first.Reservation {
		t.Fatal("the copies have different members")
	}
	if err := e.s.Fail(e.ctx, second, "22222222-2222-4222-8222-222222222222", "second copy", jobqueue.Followup{}); err != nil {
		t.Fatal(err)
	}
	if f := e.failed(t); len(f) != 2 || !strings.Contains(f[1].Exception, "second copy") {
		t.Fatalf("failed rows %+v, want one per copy", f)
	}
	if got := e.keys(t); got != "" {
		t.Fatalf("left in Redis: %s", got)
	}
}

// TestRetriedWritesCountTheirEarlierTry: a write whose answer was lost
// (marked unsure) and that finds the member gone while the reservation
// was still valid is the store's own earlier write, not a lost
// reservation; a failed_jobs row whose commit answer was lost is found,
// not written twice.
func TestRetriedWritesCountTheirEarlierTry(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	for range 3 {
		e.push(t, "", classA)
	}
	rows := e.claim(t, "", 3)
	// Delete landed, its answer lost.
	if _, err := e.q.Delete(e.ctx, job(rows[0])); err != nil {
		t.Fatal(err)
	}
	e.s.markUnsure(rows[0])
	if lost, err := e.s.Delete(e.ctx, rows[:1]); err != nil || len(lost) != 0 {
		t.Fatalf("the retried delete: lost %v %v", lost, err)
	}
	// Without a failed try, a member gone is a lost reservation.
	if _, err := e.q.Delete(e.ctx, job(rows[1])); err != nil {
		t.Fatal(err)
	}
	if lost, err := e.s.Delete(e.ctx, rows[1:2]); err != nil || len(lost) != 1 {
		t.Fatalf("a member gone without an earlier try: lost %v %v", lost, err)
	}
	// Fail: the row committed, the answer lost.
	p, _ := payload.Parse(rows[2].Payload)
	stored, err := e.db.RecordFailed(e.ctx, "default", rows[2].Payload, p.UUID, "boom")
	if err != nil {
		t.Fatal(err)
	}
	w := e.s.begin(rows[2])
	w.fw.UUID = stored
	if err := e.s.Fail(e.ctx, rows[2], p.UUID, "boom", jobqueue.Followup{}); err != nil {
		t.Fatal(err)
	}
	if failed := e.failed(t); len(failed) != 1 || failed[0].UUID != p.UUID {
		t.Fatalf("failed rows %+v, want the first try's only", failed)
	}
	if len(e.s.writes) != 0 {
		t.Fatalf("writes left under way: %d", len(e.s.writes))
	}
}

// TestUnreserveGivesTheJobBackAndClaimsLeaveIt: a job given back is at
// the head as it was (attempts not counted); claims that exclude it leave
// it there, take the job behind it, and then take nothing (CountClaimable
// counts nothing) until the worker stops excluding it.
func TestUnreserveGivesTheJobBackAndClaimsLeaveIt(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	first := e.push(t, "", classA)
	second := e.push(t, "", classA)
	before := e.list(t, "default")
	row := e.claim(t, "", 1)[0]
	if err := e.s.Unreserve(e.ctx, row); err != nil {
		t.Fatal(err)
	}
	if after := e.list(t, "default"); strings.Join(after, "\n") != strings.Join(before, "\n") || len(e.reserved(t, "default")) != 0 {
		t.Fatalf("list after unreserve %q, want %q", after, before)
	}
	opts := jobqueue.ClaimOptions{ExcludeIDs: []int64{row.ID}}
	rows, err := e.s.Claim(e.ctx, []string{""}, 5, opts)
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim behind the given-back job: %+v %v", rows, err)
	}
	if p, _ := payload.Parse(rows[0].Payload); p.UUID != second {
		t.Fatal("claimed the given-back job")
	}
	for range 3 {
		rows, err := e.s.Claim(e.ctx, []string{""}, 5, opts)
		if err != nil || len(rows) != 0 {
			t.Fatalf("a claim took the given-back job: %+v %v", rows, err)
		}
	}
	if got := e.list(t, "default"); len(got) != 1 || got[0] != before[0] {
		t.Fatalf("list %q, want the given-back job alone, as it was", got)
	}
	if n, err := e.s.CountClaimable(e.ctx, []string{""}, opts); err != nil || n != 0 {
		t.Fatalf("claimable %d %v", n, err)
	}
	if l := e.s.Left(); len(l) != 1 || l[0].Reason != ReasonGivenBack || l[0].Jobs != 1 {
		t.Fatalf("left %+v", l)
	}
	rows, err = e.s.Claim(e.ctx, []string{""}, 5, jobqueue.ClaimOptions{})
	if err != nil || len(rows) != 1 || rows[0].Attempts != 1 {
		t.Fatalf("claim without the exclusion: %+v %v", rows, err)
	}
	if p, _ := payload.Parse(rows[0].Payload); p.UUID != first {
		t.Fatal("the given-back job is not first")
	}
	if err := e.s.Unreserve(e.ctx, rows[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Unreserve(e.ctx, rows[0]); !errors.Is(err, jobqueue.ErrReservationLost) {
		t.Fatalf("a second unreserve: %v", err)
	}
}

// TestExtendKeepsARunningJob: Extend moves the reservation to now +
// retry_after, so a pop after the old expiry does not take the job; a
// job another worker took over is left out.
func TestExtendKeepsARunningJob(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{retryAfter: 3 * time.Second})
	for range 2 {
		e.push(t, "", classA)
	}
	rows := e.claim(t, "", 2)
	claimedAt := *rows[0].ReservedAt
	e.finishElsewhere(t, e.takeOver(t, rows[1]))
	waitUntil(t, 5*time.Second, "the next second", func() bool { return time.Now().Unix() > claimedAt })
	refreshed, err := e.s.Extend(e.ctx, rows)
	if err != nil || len(refreshed) != 1 || refreshed[0].ID != rows[0].ID || *refreshed[0].ReservedAt <= claimedAt {
		t.Fatalf("refreshed %+v %v", refreshed, err)
	}
	if refreshed[0].Reservation != rows[0].Reservation {
		t.Fatal("Extend changed the reservation")
	}
	var score float64
	for _, z := range e.reserved(t, "default") {
		if z.Member == rows[0].Reservation {
			score = z.Score
		}
	}
	if int64(score) != *refreshed[0].ReservedAt+3 {
		t.Fatalf("score %v, want %d", score, *refreshed[0].ReservedAt+3)
	}
	// At the old expiry a pop finds nothing to move back.
	waitUntil(t, 5*time.Second, "the old expiry", func() bool { return time.Now().Unix() >= claimedAt+3 })
	other, _ := redisproto.New(e.rc, e.q.Config())
	if res, err := other.Pop(e.ctx, "", redisproto.PopOptions{}); err != nil || len(res.Jobs) != 0 {
		t.Fatalf("another pop took a job: %+v %v", res, err)
	}
	if lost, err := e.s.Delete(e.ctx, refreshed); err != nil || len(lost) != 0 {
		t.Fatalf("delete: %v %v", lost, err)
	}
}

// TestForeignHeadIsLeftLoggedOnceAndCounted: a job of a class Go has no
// handler for, at the head of a queue, stays there untouched however
// often the claims meet it, and the jobs Go serves behind it are claimed;
// it is logged once (class, how many, the fix), counted once, reported
// by LeftNow, and a claim that finds nothing of Go's behind it goes on to
// the next queue.
func TestForeignHeadIsLeftLoggedOnceAndCounted(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	e.push(t, "shared", classB)
	mine := e.push(t, "shared", classA)
	e.push(t, "shared", classB)
	other := e.push(t, "go", classA)
	opts := jobqueue.ClaimOptions{DisplayNames: []string{classA}}
	rows, err := e.s.Claim(e.ctx, []string{"shared"}, 10, opts)
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim: %+v %v", rows, err)
	}
	if p, _ := payload.Parse(rows[0].Payload); p.UUID != mine {
		t.Fatal("claimed the wrong job")
	}
	before := e.keys(t)
	for range 5 {
		rows, err := e.s.Claim(e.ctx, []string{"shared"}, 10, opts)
		if err != nil || len(rows) != 0 {
			t.Fatalf("claim: %+v %v", rows, err)
		}
	}
	if after := e.keys(t); after != before {
		t.Fatalf("claims changed Redis:\n%s\n%s", before, after)
	}
	if n, err := e.s.CountClaimable(e.ctx, []string{"shared"}, opts); err != nil || n != 0 {
		t.Fatalf("claimable %d %v", n, err)
	}
	rows, err = e.s.Claim(e.ctx, []string{"shared", "go"}, 10, opts)
	if err != nil || len(rows) != 1 || rows[0].Queue != "go" {
		t.Fatalf("claim over two queues: %+v %v", rows, err)
	}
	if p, _ := payload.Parse(rows[0].Payload); p.UUID != other {
		t.Fatal("claimed the wrong job")
	}
	if l := e.s.Left(); len(l) != 1 || l[0].Queue != "shared" || l[0].Reason != ReasonClass || l[0].Jobs != 2 {
		t.Fatalf("left %+v, want the two PhpOnly jobs counted once each", l)
	}
	now := e.s.LeftNow()
	if len(now) != 1 || now[0].Queue != "shared" || now[0].Class != classB || now[0].Jobs != 2 || now[0].More {
		t.Fatalf("left now %+v", now)
	}
	if !strings.Contains(now[0].String(), "2 job(s) of App\\Jobs\\PhpOnly") {
		t.Fatalf("left now says %q", now[0])
	}
	logs := e.logs.String()
	if n := strings.Count(logs, "no handler"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, logs)
	}
	if !strings.Contains(logs, `"class":"App\\Jobs\\PhpOnly"`) || !strings.Contains(logs, `"jobs":2`) || !strings.Contains(logs, "queue:work") {
		t.Fatalf("the log does not name the class, the count and the fix:\n%s", logs)
	}
	// The store keeps the last claim's filter: a caller that writes
	// another class into the slice it passed claims that class.
	opts.DisplayNames[0] = classB
	if rows, err := e.s.Claim(e.ctx, []string{"shared"}, 10, opts); err != nil || len(rows) != 2 || rows[0].Queue != "shared" {
		t.Fatalf("claim of the class written into the same slice: %+v %v", rows, err)
	}
}

// TestUnreadableJobIsAClaimError: a job Laravel's pop would lose comes
// back as a ClaimError whose row fails it (failed_jobs keeps the raw
// bytes); the jobs popped with it go back untouched.
func TestUnreadableJobIsAClaimError(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	e.push(t, "", classA)
	e.rc.RPush(e.ctx, e.q.Config().Keys("").Ready, `not json`)
	e.push(t, "", classA)
	before := e.list(t, "default")
	_, err := e.s.Claim(e.ctx, []string{""}, 5, jobqueue.ClaimOptions{})
	var ce *jobqueue.ClaimError
	if !errors.As(err, &ce) || string(ce.Job.Payload) != "not json" || ce.Job.Reservation != "not json" {
		t.Fatalf("claim: %v", err)
	}
	if got := e.list(t, "default"); len(got) != 2 || got[0] != before[0] || got[1] != before[2] {
		t.Fatalf("list after the claim error %q", got)
	}
	if err := e.s.Fail(e.ctx, ce.Job, "11111111-1111-4111-8111-111111111111", "unreadable", jobqueue.Followup{}); err != nil {
		t.Fatal(err)
	}
	if f := e.failed(t); len(f) != 1 || f[0].Payload != "not json" {
		t.Fatalf("failed %+v", f)
	}
	if rows := e.claim(t, "", 2); rows[0].Attempts != 1 {
		t.Fatalf("the good jobs were counted: %+v", rows)
	}
}

// TestBlockingClaim: with block_for, a claim on empty queues waits on
// the first one and returns as soon as a job is pushed there.
func TestBlockingClaim(t *testing.T) {
	block := 10 * time.Second
	e := newEnv(t, appconfig.EngineSQLite, envOptions{blockFor: &block})
	done := make(chan []jobqueue.JobRow, 1)
	go func() {
		rows, err := e.s.Claim(e.ctx, []string{"", "other"}, 1, jobqueue.ClaimOptions{})
		if err != nil {
			t.Error(err)
		}
		done <- rows
	}()
	waitUntil(t, 5*time.Second, "the claim to block", func() bool {
		clients, _ := e.rc.ClientList(e.ctx).Result()
		return strings.Contains(clients, "cmd=blpop")
	})
	pushed := time.Now()
	e.push(t, "", classA)
	select {
	case rows := <-done:
		if len(rows) != 1 || time.Since(pushed) > 2*time.Second {
			t.Fatalf("claimed %d after %s", len(rows), time.Since(pushed))
		}
	case <-time.After(block):
		t.Fatal("the blocking claim did not return")
	}
}

// TestAdmin: sizes by state, class counts, a move, pushes as dispatch()
// writes them and a retry of a failed job onto its Redis queue with
// attempts reset.
func TestAdmin(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	ctx := e.ctx
	e.push(t, "a", classA)
	e.push(t, "a", classB)
	if err := e.s.PushMany(ctx, []jobqueue.PushItem{{Queue: "a", Payload: built(t, classA)}, {Queue: "a", Payload: built(t, classA), Delay: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Push(ctx, jobqueue.PushItem{Queue: "b", Payload: built(t, classA)}); err != nil {
		t.Fatal(err)
	}
	e.claim(t, "b", 1)
	sizes, err := e.s.Sizes(ctx)
	if err != nil || len(sizes) != 2 {
		t.Fatalf("sizes %+v %v", sizes, err)
	}
	if a := sizes[0]; a.Queue != "a" || a.Ready != 3 || a.Delayed != 1 || a.Reserved != 0 {
		t.Errorf("queue a %+v", a)
	}
	if b := sizes[1]; b.Queue != "b" || b.Reserved != 1 || b.Total() != 1 {
		t.Errorf("queue b %+v", b)
	}
	counts, err := e.s.CountClasses(ctx, "a", []string{classA, classB})
	if err != nil || counts[0].Unreserved != 3 || counts[1].Unreserved != 1 {
		t.Fatalf("counts %+v %v", counts, err)
	}
	moved, err := e.s.Move(ctx, "a", "c", []string{classA})
	if err != nil || moved[classA] != 3 {
		t.Fatalf("moved %v %v", moved, err)
	}
	if n := len(e.list(t, "c")) + len(e.delayed(t, "c")); n != 3 {
		t.Fatalf("%d jobs on c", n)
	}

	// A failed job goes back to its Redis queue with attempts 0.
	uuid := e.push(t, "d", classA)
	row := e.claim(t, "d", 1)[0]
	if err := e.s.Release(ctx, row, 0); err != nil {
		t.Fatal(err)
	}
	e.makeDue(t, "d")
	row = e.claim(t, "d", 1)[0]
	if row.Attempts != 2 {
		t.Fatalf("attempt %d", row.Attempts)
	}
	if err := e.s.Fail(ctx, row, uuid, "boom", jobqueue.Followup{}); err != nil {
		t.Fatal(err)
	}
	if f := e.failed(t); len(f) != 1 || field(t, f[0].Payload, "attempts") != 1.0 {
		t.Fatalf("failed %+v", f)
	}
	res, err := e.s.Retry(ctx, []string{uuid}, nil)
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("retry %+v %v", res, err)
	}
	if l := e.list(t, "d"); len(l) != 1 || field(t, l[0], "attempts") != 0.0 || field(t, l[0], "uuid") != uuid {
		t.Fatalf("retried job %q", l)
	}
	if f := e.failed(t); len(f) != 0 {
		t.Fatal("the retried job is still in failed_jobs")
	}
	if n, err := e.s.Clear(ctx, "d"); err != nil || n != 1 {
		t.Fatalf("clear %d %v", n, err)
	}
}

// TestNewRefusesADatabaseOfAnotherConnection: failed jobs must be
// recorded under the redis connection's name.
func TestNewRefusesADatabaseOfAnotherConnection(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	db := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	if _, err := New(e.q, db, Options{}); err == nil || !strings.Contains(err.Error(), `"database"`) {
		t.Fatalf("New: %v", err)
	}
}

// TestSchemaIsFailedJobsAndBatches: the Redis store needs failed_jobs and
// job_batches in the database, and creates those two only (no jobs table).
func TestSchemaIsFailedJobsAndBatches(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		cfg := testdb.Config(t, engine)
		cfg.ConnectionName = "redis"
		ctx := context.Background()
		db, err := database.Open(ctx, cfg, database.Options{})
		if err != nil {
			if engine != appconfig.EngineSQLite && os.Getenv("LARAWORKER_TEST_REQUIRE_DB") == "" {
				t.Skip(err)
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { db.DropTables(context.Background()); db.Close() })
		e := newEnvOn(t, db, envOptions{})
		missing, err := e.s.MissingTables(ctx)
		if err != nil || len(missing) != 2 || missing[0].Role != "failed_jobs" || missing[1].Role != "job_batches" {
			t.Fatalf("missing %+v %v", missing, err)
		}
		if err := e.s.CreateTables(ctx); err != nil {
			t.Fatal(err)
		}
		if missing, err := e.s.MissingTables(ctx); err != nil || len(missing) != 0 {
			t.Fatalf("missing after CreateTables %+v %v", missing, err)
		}
		if all, _ := db.MissingTables(ctx); len(all) != 1 || all[0].Role != "jobs" {
			t.Fatalf("the database's tables: missing %+v, want the jobs table only", all)
		}
	})
}

// TestBatchesAreTheDatabases: the Redis store lists, reads and cancels
// Laravel's batches where Laravel keeps them whatever the queue driver
// (job_batches, through its repository), as the dashboard's Batches page
// does on a redis connection; a queued job cannot be looked up one by
// one (it has no number, and no index names it by uuid).
func TestBatchesAreTheDatabases(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	e.insertBatch(t, "9a01", 2, []byte("a:0:{}"))
	e.insertBatch(t, "9a02", 1, []byte("a:0:{}"))
	list, err := e.s.ListBatches(e.ctx, "", 10)
	if err != nil || len(list) != 2 || list[0].ID != "9a02" || list[1].ID != "9a01" {
		t.Fatalf("batches %+v %v, want 9a02 then 9a01", list, err)
	}
	if err := e.s.CancelBatch(e.ctx, "9a01"); err != nil {
		t.Fatal(err)
	}
	if b := e.batch(t, "9a01"); !b.Cancelled() || !b.Finished() {
		t.Fatalf("cancelled batch in job_batches: %+v", b)
	}
	if err := e.s.CancelBatch(e.ctx, "nope"); !errors.Is(err, jobqueue.ErrBatchNotFound) {
		t.Fatalf("cancel of an unknown batch: %v", err)
	}
	e.push(t, "default", classA)
	if _, err := e.s.FindJob(e.ctx, 1); !errors.Is(err, jobqueue.ErrNotSupported) {
		t.Fatalf("FindJob: %v, want ErrNotSupported", err)
	}
	if _, err := e.s.FindJobByUUID(e.ctx, "x"); !errors.Is(err, jobqueue.ErrNotSupported) {
		t.Fatalf("FindJobByUUID: %v, want ErrNotSupported", err)
	}
}
