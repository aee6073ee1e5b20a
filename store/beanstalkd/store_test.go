package beanstalkd

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/beanstalkproto"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
)

// TestClaimAndDelete: a claim takes the jobs Laravel put, from the first
// tube of the list that has any, each reserved with its attempt counted
// (stats-job's reserves: Laravel's attempts()) and its bytes as put;
// Delete removes them.
func TestClaimAndDelete(t *testing.T) {
	e := newEnv(t, envOptions{})
	low := e.put(t, "default", built(t, classA))
	high := []uint64{e.put(t, "high", built(t, classA)), e.put(t, "high", built(t, classA))}
	rows := e.claim(t, 5, jobqueue.ClaimOptions{}, "high", "")
	if len(rows) != 2 || uint64(rows[0].ID) != high[0] || uint64(rows[1].ID) != high[1] {
		t.Fatalf("claimed %+v, want the two of high", rows)
	}
	for _, r := range rows {
		st := e.stats(t, uint64(r.ID))
		if r.Queue != "high" || r.Attempts != 1 || st.State != "reserved" || st.Reserves != 1 || r.ReservedAt == nil {
			t.Fatalf("row %+v, stats %+v", r, st)
		}
	}
	if !strings.Contains(string(rows[0].Payload), `"displayName":"App\\Jobs\\SendMail"`) {
		t.Fatalf("payload %s", rows[0].Payload)
	}
	lost, err := e.s.Delete(e.ctx, rows)
	if err != nil || len(lost) != 0 {
		t.Fatalf("delete: %v lost %v", err, lost)
	}
	e.gone(t, high[0])
	e.gone(t, high[1])
	rows = e.claim(t, 5, jobqueue.ClaimOptions{}, "high", "")
	if len(rows) != 1 || uint64(rows[0].ID) != low || rows[0].Queue != "default" {
		t.Fatalf("then %+v", rows)
	}
	if lost, err := e.s.Delete(e.ctx, rows); err != nil || len(lost) != 0 {
		t.Fatalf("delete: %v lost %v", err, lost)
	}
	// A row whose reservation the store no longer holds is lost.
	if lost, err := e.s.Delete(e.ctx, rows); err != nil || len(lost) != 1 {
		t.Fatalf("second delete of the same row: %v %v", lost, err)
	}
}

// TestClaimLeavesWhatItMustNotRun: a claim never reserves a job of a
// class it may not run, nor one the worker gave back: the head of the
// tube stays as it was (reserves 0: no attempt counted), the claim takes
// nothing there and says what it left, and CountClaimable counts nothing.
func TestClaimLeavesWhatItMustNotRun(t *testing.T) {
	e := newEnv(t, envOptions{})
	php := e.put(t, "default", built(t, classB))
	e.put(t, "default", built(t, classA))
	opts := jobqueue.ClaimOptions{DisplayNames: []string{strings.ToLower(classA)}}
	if rows := e.claim(t, 1, opts, ""); len(rows) != 0 {
		t.Fatalf("claimed %+v", rows)
	}
	if st := e.stats(t, php); st.State != "ready" || st.Reserves != 0 {
		t.Fatalf("the PHP job was touched: %+v", st)
	}
	left := e.s.LeftNow()
	if len(left) != 1 || left[0].Class != classB || left[0].Reason != jobqueue.LeftClass || left[0].Queue != "default" {
		t.Fatalf("left %+v", left)
	}
	if n, err := e.s.CountClaimable(e.ctx, []string{""}, opts); err != nil || n != 0 {
		t.Fatalf("claimable %d %v", n, err)
	}
	if rows := e.claim(t, 1, jobqueue.ClaimOptions{ExcludeDisplayNames: []string{classB}}, ""); len(rows) != 0 {
		t.Fatalf("claimed an excluded class: %+v", rows)
	}
	rows := e.claim(t, 1, jobqueue.ClaimOptions{}, "")
	if len(rows) != 1 || uint64(rows[0].ID) != php || len(e.s.LeftNow()) != 0 {
		t.Fatalf("without a filter: %+v, left %+v", rows, e.s.LeftNow())
	}
}

// TestReleaseCountsTheAttempt: Release is BeanstalkdJob::release: the job
// delayed at priority 1024, ready after the delay, and its next claim is
// the next attempt.
func TestReleaseCountsTheAttempt(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.put(t, "default", built(t, classA))
	row := e.claim(t, 1, jobqueue.ClaimOptions{}, "")[0]
	if err := e.s.Release(e.ctx, row, 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	st := e.stats(t, id)
	if st.State != "delayed" || st.Pri != beanstalkproto.DefaultPriority || st.Delay != 2 || st.Releases != 1 {
		t.Fatalf("after release: %+v", st)
	}
	if rows := e.claim(t, 1, jobqueue.ClaimOptions{}, ""); len(rows) != 0 {
		t.Fatal("a released job was claimed before its delay")
	}
	e.waitState(t, id, "ready")
	rows := e.claim(t, 1, jobqueue.ClaimOptions{}, "")
	if len(rows) != 1 || rows[0].Attempts != 2 {
		t.Fatalf("after the delay: %+v", rows)
	}
	if err := e.s.Release(e.ctx, row, 0); !errors.Is(err, jobqueue.ErrReservationLost) {
		t.Fatalf("release of the first reservation: %v", err)
	}
}

// TestUnreserveDoesNotCountTheAttempt: a job given back has the attempts
// it had before the claim (a PHP worker's next reserve sees the same
// attempt number it would have seen had Go never claimed it), keeps its
// body, priority and time-to-run, and claims leave it while the worker
// excludes the row.
func TestUnreserveDoesNotCountTheAttempt(t *testing.T) {
	e := newEnv(t, envOptions{})
	raw := built(t, classA)
	id := e.put(t, "default", raw)
	// A first attempt by another worker, released.
	if _, err := e.bs.ReserveJob(id); err != nil {
		t.Fatal(err)
	}
	if err := e.bs.Release(id, beanstalkproto.DefaultPriority, 0); err != nil {
		t.Fatal(err)
	}
	row := e.claim(t, 1, jobqueue.ClaimOptions{}, "")[0]
	if row.Attempts != 2 {
		t.Fatalf("claimed as attempt %d", row.Attempts)
	}
	if err := e.s.Unreserve(e.ctx, row); err != nil {
		t.Fatal(err)
	}
	e.gone(t, id)
	opts := jobqueue.ClaimOptions{ExcludeIDs: []int64{row.ID}}
	if rows := e.claim(t, 1, opts, ""); len(rows) != 0 {
		t.Fatalf("claimed the job given back: %+v", rows)
	}
	if left := e.s.LeftNow(); len(left) != 1 || left[0].Reason != jobqueue.LeftGivenBack {
		t.Fatalf("left %+v", left)
	}
	if err := e.bs.Watch("default"); err != nil {
		t.Fatal(err)
	}
	j, err := e.bs.ReserveWithTimeout(0) // PHP's pop
	if err != nil {
		t.Fatal(err)
	}
	st := e.stats(t, j.ID)
	if !bytes.Equal(j.Body, raw) || st.Reserves != 2 || st.Pri != beanstalkproto.DefaultPriority || st.TTR != 90 || st.Tube != "default" {
		t.Fatalf("the job given back, as PHP reserves it: %+v %q", st, j.Body)
	}
}

// TestExtendTouches: Extend gives running jobs their whole time-to-run
// again; a job another worker took after its time-to-run ran out is left
// out, and its outcome writes nothing.
func TestExtendTouches(t *testing.T) {
	e := newEnv(t, envOptions{conns: 1})
	id := e.put(t, "default", built(t, classA))
	row := e.claim(t, 1, jobqueue.ClaimOptions{}, "")[0]
	for e.stats(t, id).TimeLeft > 88 { // 2 s pass: bounded by the clock
		time.Sleep(50 * time.Millisecond)
	}
	out, err := e.s.Extend(e.ctx, []jobqueue.JobRow{row})
	if err != nil || len(out) != 1 || e.stats(t, id).TimeLeft < 89 {
		t.Fatalf("extend: %v %+v, stats %+v", err, out, e.stats(t, id))
	}

	if err := e.bs.Use("short"); err != nil {
		t.Fatal(err)
	}
	short, err := e.bs.Put(beanstalkproto.DefaultPriority, 0, 1, built(t, classA)) // another app's retry_after
	if err != nil {
		t.Fatal(err)
	}
	row = e.claim(t, 1, jobqueue.ClaimOptions{}, "short")[0]
	if !strings.Contains(e.logs.String(), "time-to-run is shorter") {
		t.Errorf("no warning about the short time-to-run: %s", e.logs)
	}
	deadline := time.Now().Add(10 * time.Second)
	for st := e.stats(t, short); st.State == "reserved" && st.TimeLeft > -1; st = e.stats(t, short) {
		if time.Now().After(deadline) {
			t.Fatalf("the time-to-run never ran out: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// beanstalkd 1.12 enforces the time-to-run, at the latest, at the
	// holding connection's next command: a claim on another tube.
	e.claim(t, 1, jobqueue.ClaimOptions{}, "empty")
	e.waitState(t, short, "ready")
	if _, err := e.bs.ReserveJob(short); err != nil {
		t.Fatal(err)
	}
	out, err = e.s.Extend(e.ctx, []jobqueue.JobRow{row})
	if err != nil || len(out) != 0 {
		t.Fatalf("extend of a lost job: %v %+v", err, out)
	}
	if err := e.s.Fail(e.ctx, row, "u-1", "boom", jobqueue.Followup{}); !errors.Is(err, jobqueue.ErrReservationLost) {
		t.Fatalf("fail of a lost job: %v", err)
	}
	if st := e.stats(t, short); st.State != "reserved" || st.Reserves != 2 {
		t.Fatalf("the other worker's job: %+v", st)
	}
	if f := testdb.FailedRows(t, e.db); len(f) != 0 {
		t.Fatalf("failed rows %+v", f)
	}
}

// TestFailAndRetry: Fail writes the failed_jobs row (connection
// beanstalkd, the tube as the queue) and deletes the job; Retry puts the
// payload back on its tube as a new job, attempts starting again.
func TestFailAndRetry(t *testing.T) {
	e := newEnv(t, envOptions{})
	raw := built(t, classA)
	id := e.put(t, "mail", raw)
	row := e.claim(t, 1, jobqueue.ClaimOptions{}, "mail")[0]
	p, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	uuid := p.UUID
	if err := e.s.Fail(e.ctx, row, uuid, "RuntimeException: boom", jobqueue.Followup{}); err != nil {
		t.Fatal(err)
	}
	e.gone(t, id)
	f := testdb.FailedRows(t, e.db)
	if len(f) != 1 || f[0].UUID != uuid || f[0].Connection != "beanstalkd" || f[0].Queue != "mail" || f[0].Payload != string(raw) || !strings.Contains(f[0].Exception, "boom") {
		t.Fatalf("failed rows %+v", f)
	}
	res, err := e.s.RetryAll(e.ctx, "", nil)
	if err != nil || len(res) != 1 || res[0].Err != nil || res[0].NewID == 0 {
		t.Fatalf("retry: %+v %v", res, err)
	}
	st := e.stats(t, uint64(res[0].NewID))
	if st.Tube != "mail" || st.State != "ready" || st.Reserves != 0 || st.TTR != 90 || st.Pri != beanstalkproto.DefaultPriority {
		t.Fatalf("retried job %+v", st)
	}
	if len(testdb.FailedRows(t, e.db)) != 0 {
		t.Fatal("the failed row stayed")
	}
}

// TestFinishPushesTheNextLink: a finished job's chain link is put on its
// tube and the job deleted; a job whose reservation turned out lost
// takes its link back.
func TestFinishPushesTheNextLink(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.put(t, "default", built(t, classA))
	row := e.claim(t, 1, jobqueue.ClaimOptions{}, "")[0]
	next := built(t, classB)
	if err := e.s.Finish(e.ctx, row, jobqueue.Followup{Next: &jobqueue.PushItem{Queue: "chains", Payload: next, Delay: 3 * time.Second}}); err != nil {
		t.Fatal(err)
	}
	e.gone(t, id)
	if err := e.bs.Use("chains"); err != nil {
		t.Fatal(err)
	}
	link, err := e.bs.PeekDelayed()
	if err != nil || !bytes.Equal(link.Body, next) {
		t.Fatalf("the link: %v %q", err, link.Body)
	}
	if st := e.stats(t, link.ID); st.Delay != 3 || st.TTR != 90 {
		t.Fatalf("the link's stats %+v", st)
	}
}

// TestWritesAfterTheConnectionBroke: when the connection that reserved a
// job breaks, the server gives the job back; a delete then still removes
// it (it is not run again) while no other worker took it, a release
// leaves it ready, and a give-back restores its attempts; once another
// worker has reserved it, every write is lost.
func TestWritesAfterTheConnectionBroke(t *testing.T) {
	e := newEnv(t, envOptions{})
	ids := []uint64{e.put(t, "default", built(t, classA)), e.put(t, "default", built(t, classA)), e.put(t, "default", built(t, classA)), e.put(t, "default", built(t, classA))}
	rows := e.claim(t, 4, jobqueue.ClaimOptions{}, "")
	if len(rows) != 4 {
		t.Fatalf("claimed %d", len(rows))
	}
	e.breakConn(t, rows[0])
	for _, id := range ids {
		e.waitState(t, id, "ready")
	}
	if lost, err := e.s.Delete(e.ctx, rows[:1]); err != nil || len(lost) != 0 {
		t.Fatalf("delete after the break: %v %v", lost, err)
	}
	e.gone(t, ids[0])
	if err := e.s.Release(e.ctx, rows[1], 0); err != nil {
		t.Fatal(err)
	}
	if st := e.stats(t, ids[1]); st.State != "ready" || st.Reserves != 1 {
		t.Fatalf("released: %+v", st)
	}
	if err := e.s.Unreserve(e.ctx, rows[2]); err != nil {
		t.Fatal(err)
	}
	e.gone(t, ids[2])
	if _, err := e.bs.ReserveJob(ids[3]); err != nil { // another worker
		t.Fatal(err)
	}
	if lost, err := e.s.Delete(e.ctx, rows[3:]); err != nil || len(lost) != 1 {
		t.Fatalf("delete of a job another worker has: %v %v", lost, err)
	}
	// What is left: the released job and the given-back copy, each
	// with the attempts before Go's claim counted (1 and 0).
	if err := e.bs.Use("default"); err != nil {
		t.Fatal(err)
	}
	var reserves []int64
	for range 2 {
		j, err := e.bs.PeekReady()
		if err != nil {
			t.Fatal(err)
		}
		reserves = append(reserves, e.stats(t, j.ID).Reserves)
		if err := e.bs.Delete(j.ID); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(reserves, []int64{1, 0}) {
		t.Fatalf("reserves of what is left: %v", reserves)
	}
}

// TestClaimWaitsForBlockFor: with block_for, a claim on empty tubes
// returns the job pushed while it waits.
func TestClaimWaitsForBlockFor(t *testing.T) {
	e := newEnv(t, envOptions{blockFor: 3 * time.Second})
	done := make(chan []jobqueue.JobRow)
	go func() {
		rows, _ := e.s.Claim(e.ctx, []string{"", "other"}, 1, jobqueue.ClaimOptions{})
		done <- rows
	}()
	// The claim is waiting when it has looked at the tube at least twice.
	for {
		st, err := e.bs.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := strconv.Atoi(st["cmd-peek-ready"]); n >= 4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	id := e.put(t, "other", built(t, classA))
	select {
	case rows := <-done:
		if len(rows) != 1 || uint64(rows[0].ID) != id {
			t.Fatalf("claimed %+v", rows)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting claim did not return the job")
	}
}

// TestReserveCheckedPutsBackADelayedJob: a job another worker released
// with a delay between a claim's peek and its reserve is put back
// delayed, not run early.
func TestReserveCheckedPutsBackADelayedJob(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.put(t, "default", built(t, classA))
	if _, err := e.bs.ReserveJob(id); err != nil {
		t.Fatal(err)
	}
	if err := e.bs.Release(id, beanstalkproto.DefaultPriority, 60); err != nil {
		t.Fatal(err)
	}
	c, err := e.s.pool.claimConn(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, ok, err := e.s.reserveChecked(c, "default", id)
	if err != nil || ok {
		t.Fatalf("reserved a delayed job: %v %v", ok, err)
	}
	if st := e.stats(t, id); st.State != "delayed" || st.TimeLeft < 58 {
		t.Fatalf("after: %+v", st)
	}
}

// TestAdmin: Push puts as Laravel's pushRaw/later (priority 1024,
// time-to-run retry_after), Sizes counts ready, delayed and reserved per
// tube, and what beanstalkd cannot do (clear, move) is refused by name.
func TestAdmin(t *testing.T) {
	e := newEnv(t, envOptions{})
	id, err := e.s.Push(e.ctx, jobqueue.PushItem{Payload: built(t, classA)})
	if err != nil {
		t.Fatal(err)
	}
	if st := e.stats(t, uint64(id.Num)); st.Tube != "default" || st.Pri != 1024 || st.TTR != 90 || st.State != "ready" {
		t.Fatalf("pushed %+v", st)
	}
	if err := e.s.PushMany(e.ctx, []jobqueue.PushItem{{Queue: "b", Payload: built(t, classA), Delay: time.Hour}, {Queue: "b", Payload: built(t, classA)}}); err != nil {
		t.Fatal(err)
	}
	e.claim(t, 1, jobqueue.ClaimOptions{}, "b")
	sizes, err := e.s.Sizes(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []jobqueue.QueueSize{{Queue: "b", Delayed: 1, Reserved: 1}, {Queue: "default", Ready: 1}}
	if !slices.Equal(sizes, want) {
		t.Fatalf("sizes %+v", sizes)
	}
	if _, err := e.s.Clear(e.ctx, "default"); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("clear: %v", err)
	}
	if _, err := e.s.Move(e.ctx, "default", "b", []string{classA}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("move: %v", err)
	}
	if _, err := e.s.Push(e.ctx, jobqueue.PushItem{Queue: "bad name", Payload: []byte("{}")}); err == nil || !strings.Contains(err.Error(), "tube name") {
		t.Fatalf("a bad tube: %v", err)
	}
}

// TestTraceDestinationAsPHPsInstrumentation: spans name a beanstalkd
// queue as OpenTelemetry's Laravel instrumentation names
// BeanstalkdQueue's (messaging.system "beanstalk", the tube; the
// connection's default tube for the default queue).
func TestTraceDestinationAsPHPsInstrumentation(t *testing.T) {
	e := newEnv(t, envOptions{})
	for queue, want := range map[string]string{"": "default", "emails": "emails"} {
		if system, name := e.s.TraceDestination(queue); system != "beanstalk" || name != want {
			t.Errorf("TraceDestination(%q) = %q, %q; want beanstalk, %q", queue, system, name, want)
		}
	}
}
