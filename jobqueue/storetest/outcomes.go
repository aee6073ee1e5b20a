package storetest

import (
	"errors"
	"regexp"
	"slices"

	"github.com/laraworker/laraworker/jobqueue"
)

// testReclaim is the crash semantic: of two jobs in flight, the one its
// worker deleted never comes back; the one never deleted (its worker
// died) comes back after retry_after, once, with a second attempt, and
// not before.
func testReclaim(e *env) {
	done := e.push("default", Served)
	crashed := e.push("default", Served)
	rows := e.claim("default", 2)
	if uuids(e.t, rows)[1] != crashed {
		e.t.Fatalf("claimed %v", uuids(e.t, rows))
	}
	if lost, err := e.s.Delete(e.ctx, rows[:1]); err != nil || len(lost) != 0 {
		e.t.Fatalf("delete: lost %v, %v", lost, err)
	}
	e.claimNone("default", "before retry_after")
	e.expired()
	back := e.claimAfter(0, "default", 1)
	if got := uuidOf(back[0].Payload); got != crashed || back[0].Attempts != 2 {
		e.t.Fatalf("after retry_after: job %s attempts %d, want %s (not %s) with attempts 2", got, back[0].Attempts, crashed, done)
	}
	e.claimNone("default", "after the crashed job came back")
	if lost, err := e.s.Delete(e.ctx, back); err != nil || len(lost) != 0 {
		e.t.Fatalf("delete of the reclaimed job: lost %v, %v", lost, err)
	}
	e.expired()
	e.claimNone("default", "after both were deleted and retry_after passed again")
}

// lostReservations pushes n jobs, claims them, lets the reservations
// expire and has "another worker" reclaim them: the first worker's rows
// and the second's, in the same order.
func (e *env) lostReservations(queue string, n int) (old, current []jobqueue.JobRow) {
	e.t.Helper()
	for range n {
		e.push(queue, Served)
	}
	old = e.claim(queue, n)
	e.expired()
	current = e.claimAfter(0, queue, n)
	if !sameSet(uuids(e.t, current), uuids(e.t, old)) {
		e.t.Fatalf("reclaimed %v, want %v", uuids(e.t, current), uuids(e.t, old))
	}
	byUUID := map[string]jobqueue.JobRow{}
	for _, r := range current {
		byUUID[uuidOf(r.Payload)] = r
	}
	for i, r := range old {
		current[i] = byUUID[uuidOf(r.Payload)]
	}
	return old, current
}

// lostWrite is one write of a worker about a job.
type lostWrite struct {
	name  string
	write func(jobqueue.JobRow) error
}

// lostWrites are the writes of a worker about a job: each is tried on a
// reservation of its own (a worker writes one outcome per reservation).
func (e *env) lostWrites(batchID string) []lostWrite {
	next, _ := e.job(Served)
	entry := func(j jobqueue.JobRow) *jobqueue.BatchEntry {
		return &jobqueue.BatchEntry{ID: batchID, JobUUID: uuidOf(j.Payload)}
	}
	return []lostWrite{
		{"Release", func(j jobqueue.JobRow) error { return e.s.Release(e.ctx, j, 0) }},
		{"Release with delay", func(j jobqueue.JobRow) error { return e.s.Release(e.ctx, j, e.delay()) }},
		{"Fail", func(j jobqueue.JobRow) error {
			return e.s.Fail(e.ctx, j, uuidOf(j.Payload), "RuntimeException: late", jobqueue.Followup{Batch: entry(j)})
		}},
		{"Finish", func(j jobqueue.JobRow) error {
			return e.s.Finish(e.ctx, j, jobqueue.Followup{Next: &jobqueue.PushItem{Queue: e.q("chain"), Payload: next}, Batch: entry(j)})
		}},
		{"Unreserve", func(j jobqueue.JobRow) error { return e.s.Unreserve(e.ctx, j) }},
	}
}

// testFencedWrites: every write of a worker whose reservation was
// reclaimed changes nothing (no deletion, no released copy, no failed
// job, no chain link, no batch counter) and says the reservation was
// lost; the new holder's writes then go through.
func testFencedWrites(e *env) {
	e.o.NewBatch(e.t, "fence-batch", 5)
	writes := e.lostWrites("fence-batch")
	old, current := e.lostReservations("default", len(writes))
	for i, w := range writes {
		if err := w.write(old[i]); !errors.Is(err, jobqueue.ErrReservationLost) {
			e.t.Fatalf("%s by the worker that lost the reservation: %v, want ErrReservationLost", w.name, err)
		}
	}
	if got, err := e.s.Extend(e.ctx, old); err != nil || len(got) != 0 {
		e.t.Fatalf("Extend of lost reservations refreshed %d job(s), %v; want none", len(got), err)
	}
	e.fencedNothingWritten("a lost reservation", "fence-batch")
	e.total("default", int64(len(writes)), "after the lost writes")
	if n, err := e.s.CountClaimable(e.ctx, e.qs("default"), jobqueue.ClaimOptions{}); err != nil || n != 0 {
		e.t.Fatalf("after the lost writes %d job(s) claimable (%v): the new holder's reservation was touched", n, err)
	}
	// The new holder still holds them: its delete goes through.
	if lost, err := e.s.Delete(e.ctx, current); err != nil || len(lost) != 0 {
		e.t.Fatalf("the new holder's delete: lost %v, %v", lost, err)
	}
	e.total("default", 0, "after the new holder's delete")
}

// testFencedDelete: one Delete of jobs of two claims, of which one was
// reclaimed by another worker and one reclaimed and finished, deletes the
// two still held, lists the other two lost and leaves the other worker's
// reservation as it is.
func testFencedDelete(e *env) {
	e.push("fenced", Served)
	e.push("fenced", Served)
	old := e.claim("fenced", 2)
	e.expired()
	// Another worker takes both back; this worker claims two more.
	other := e.claimAfter(0, "fenced", 2)
	e.push("held", Served)
	e.push("held", Served)
	held := e.claim("held", 2)
	if lost, err := e.s.Delete(e.ctx, other[1:]); err != nil || len(lost) != 0 {
		e.t.Fatalf("the other worker's delete: lost %v, %v", lost, err)
	}
	mixed := []jobqueue.JobRow{held[0], old[0], old[1], held[1]}
	if !e.cfg.supports(OpFencedDelete) {
		// The store cannot tell: the held jobs at least go.
		if _, err := e.s.Delete(e.ctx, held); err != nil {
			e.t.Fatalf("delete of held jobs: %v", err)
		}
		e.total("held", 0, "after the delete of the held jobs")
		return
	}
	lost, err := e.s.Delete(e.ctx, mixed)
	if err != nil || !sameSet(uuids(e.t, lost), uuids(e.t, old)) {
		e.t.Fatalf("Delete of two held jobs and two lost ones: lost %v, %v; want %v", uuids(e.t, lost), err, uuids(e.t, old))
	}
	e.total("held", 0, "after the delete of the held jobs")
	// Alone too (a store may delete one job its own way): the job the
	// other worker holds and the one it finished.
	for _, j := range old {
		if lost, err := e.s.Delete(e.ctx, []jobqueue.JobRow{j}); err != nil || len(lost) != 1 {
			e.t.Fatalf("Delete of one job whose reservation was lost: lost %v, %v; want it lost", uuids(e.t, lost), err)
		}
	}
	e.total("fenced", 1, "the job the other worker still holds")
	if n, err := e.s.CountClaimable(e.ctx, e.qs("fenced"), jobqueue.ClaimOptions{}); err != nil || n != 0 {
		e.t.Fatalf("after the lost delete %d job(s) claimable (%v): the other worker's reservation was touched", n, err)
	}
	if lost, err := e.s.Delete(e.ctx, other[:1]); err != nil || len(lost) != 0 {
		e.t.Fatalf("the other worker's delete of the job it holds: lost %v, %v", lost, err)
	}
}

// fencedNothingWritten checks that lost writes left no failed job, no
// chain link and the batch's counters as they were.
func (e *env) fencedNothingWritten(why, batchID string) {
	e.t.Helper()
	if f := e.failed(); len(f) != 0 {
		e.t.Fatalf("after %s: %d failed job(s) recorded", why, len(f))
	}
	e.total("chain", 0, "after "+why+": chain links pushed")
	if b := e.batch(batchID); b.PendingJobs != 5 || b.FailedJobs != 0 || b.Cancelled() {
		e.t.Fatalf("after %s the batch's counters changed: %+v", why, b)
	}
}

// testFencedAfterFinish: once another worker reclaimed the job and
// finished it, the first worker's writes recreate nothing.
func testFencedAfterFinish(e *env) {
	e.o.NewBatch(e.t, "fence-batch", 5)
	writes := e.lostWrites("fence-batch")
	old, current := e.lostReservations("default", len(writes)+1)
	if lost, err := e.s.Delete(e.ctx, current); err != nil || len(lost) != 0 {
		e.t.Fatalf("the new holder's delete: lost %v, %v", lost, err)
	}
	for i, w := range writes {
		if err := w.write(old[i]); !errors.Is(err, jobqueue.ErrReservationLost) {
			e.t.Fatalf("%s of a job finished elsewhere: %v, want ErrReservationLost", w.name, err)
		}
	}
	last := old[len(writes):]
	if lost, err := e.s.Delete(e.ctx, last); err != nil || len(lost) != 1 && e.cfg.supports(OpFencedDelete) {
		e.t.Fatalf("Delete of a job finished elsewhere: lost %v, %v", lost, err)
	}
	e.fencedNothingWritten("writes of a job finished elsewhere", "fence-batch")
	e.total("default", 0, "after writes of a job finished elsewhere")
	e.expired()
	e.claimNone("default", "after writes of a job finished elsewhere")
}

// testExtend: an extended reservation outlives the first retry_after,
// and the worker's writes carry the reservation Extend handed back.
func testExtend(e *env) {
	e.push("default", Served)
	row := e.claim("default", 1)[0]
	e.pass(e.s.RetryAfter() / 2)
	got, err := e.s.Extend(e.ctx, []jobqueue.JobRow{row})
	if err != nil || len(got) != 1 || got[0].ID != row.ID {
		e.t.Fatalf("extend: %v %v", got, err)
	}
	if e.o.Clock != nil {
		e.pass(e.s.RetryAfter()/2 + e.s.RetryAfter()/4)
		e.claimNone("default", "past the first retry_after, with the reservation extended")
	}
	if lost, err := e.s.Delete(e.ctx, got); err != nil || len(lost) != 0 {
		e.t.Fatalf("delete with the extended reservation: lost %v, %v", lost, err)
	}
	e.total("default", 0, "after the delete")
}

// testReleaseDelay: a job released with a delay waits it out (delayed,
// not claimable) and then comes back with its attempt counted; one
// released without a delay is claimable at once.
func testReleaseDelay(e *env) {
	e.push("default", Served)
	row := e.claim("default", 1)[0]
	if err := e.s.Release(e.ctx, row, e.delay()); err != nil {
		e.t.Fatalf("release: %v", err)
	}
	e.claimNone("default", "right after a release with a delay")
	if n, err := e.s.CountClaimable(e.ctx, e.qs("default"), jobqueue.ClaimOptions{}); err != nil || n != 0 {
		e.t.Fatalf("claimable right after a release with a delay: %d %v", n, err)
	}
	if e.cfg.supports(OpSizesByState) {
		if s := e.size("default"); s.Delayed != 1 || s.Total() != 1 {
			e.t.Fatalf("sizes after a release with a delay: %+v, want 1 delayed", s)
		}
	}
	back := e.claimAfter(e.delay(), "default", 1)[0]
	if back.Attempts != 2 {
		e.t.Fatalf("after the delay: attempts %d, want 2", back.Attempts)
	}
	if err := e.s.Release(e.ctx, back, 0); err != nil {
		e.t.Fatalf("release: %v", err)
	}
	if got := e.claimAfter(0, "default", 1)[0]; got.Attempts != 3 {
		e.t.Fatalf("after a release without delay: attempts %d, want 3", got.Attempts)
	}
}

// testDelete: deleted jobs are gone for good, reservation expiry or not.
func testDelete(e *env) {
	for range 3 {
		e.push("default", Served)
	}
	rows := e.claim("default", 3)
	if lost, err := e.s.Delete(e.ctx, rows); err != nil || len(lost) != 0 {
		e.t.Fatalf("delete: lost %v, %v", lost, err)
	}
	e.total("default", 0, "after the delete")
	e.expired()
	e.claimNone("default", "after the delete and retry_after")
}

// failedAtFormat is how failed_at reads in queue:failed ('Y-m-d H:i:s').
var failedAtFormat = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)

// testFail: a failed job leaves its queue and is recorded as queue:failed
// lists it: its uuid, the connection and queue, the payload's bytes, the
// exception and when; FindFailed finds it by uuid.
func testFail(e *env) {
	uuid := e.push("mail", Served)
	row := e.claim("mail", 1)[0]
	if err := e.s.Fail(e.ctx, row, uuid, "RuntimeException: boom in /app/Jobs/SendMail.php:12", jobqueue.Followup{}); err != nil {
		e.t.Fatalf("fail: %v", err)
	}
	e.total("mail", 0, "after the failure")
	e.expired()
	e.claimNone("mail", "after the failure and retry_after")
	f := e.failed()
	if len(f) != 1 {
		e.t.Fatalf("%d failed jobs, want 1", len(f))
	}
	got := f[0]
	if got.UUID != uuid || got.Connection != e.s.Connection() || got.Queue != e.recorded("mail") || string(got.Payload) != string(row.Payload) ||
		got.Exception != "RuntimeException: boom in /app/Jobs/SendMail.php:12" || got.Class != Served || !failedAtFormat.MatchString(got.FailedAt) {
		e.t.Fatalf("failed job %+v (payload %q), want uuid %s, connection %s, queue %s, the claimed payload %q, the exception and class %s",
			got, got.Payload, uuid, e.s.Connection(), e.recorded("mail"), row.Payload, Served)
	}
	found, err := e.s.FindFailed(e.ctx, uuid)
	if err != nil || found.UUID != uuid {
		e.t.Fatalf("find failed %s: %+v %v", uuid, found, err)
	}
	if f, err := e.s.ListFailed(e.ctx, e.recorded("other")); err != nil || len(f) != 0 {
		e.t.Fatalf("failed jobs of another queue: %d %v", len(f), err)
	}
}

// testFinishFollowup: a finished job's chain link is pushed and its
// batch's success counted, with the job's deletion.
func testFinishFollowup(e *env) {
	e.o.NewBatch(e.t, "chain-batch", 2)
	uuid := e.push("default", Served)
	row := e.claim("default", 1)[0]
	next, nextUUID := e.job(Served)
	f := jobqueue.Followup{Next: &jobqueue.PushItem{Queue: e.q("chain"), Payload: next}, Batch: &jobqueue.BatchEntry{ID: "chain-batch", JobUUID: uuid}}
	if err := e.s.Finish(e.ctx, row, f); err != nil {
		e.t.Fatalf("finish: %v", err)
	}
	e.total("default", 0, "after the finish")
	if got := uuids(e.t, e.claimAfter(0, "chain", 1)); got[0] != nextUUID {
		e.t.Fatalf("chain link %s, want %s", got[0], nextUUID)
	}
	if b := e.batch("chain-batch"); b.PendingJobs != 1 || b.FailedJobs != 0 || b.Finished() {
		e.t.Fatalf("batch after one success of two: %+v", b)
	}
}

// testFailBatch: a failure counts in its batch with the failed job's
// uuid and, without allowFailures, cancels it.
func testFailBatch(e *env) {
	e.o.NewBatch(e.t, "fail-batch", 3)
	uuid := e.push("default", Served)
	row := e.claim("default", 1)[0]
	if err := e.s.Fail(e.ctx, row, uuid, "E", jobqueue.Followup{Batch: &jobqueue.BatchEntry{ID: "fail-batch", JobUUID: uuid}}); err != nil {
		e.t.Fatalf("fail: %v", err)
	}
	b := e.batch("fail-batch")
	if b.PendingJobs != 3 || b.FailedJobs != 1 || !slices.Equal(b.FailedJobIDs, []string{uuid}) || !b.Cancelled() {
		e.t.Fatalf("batch after a failure: %+v, want failed 1 (%s), pending 3, cancelled", b, uuid)
	}
	if len(e.failed()) != 1 {
		e.t.Fatal("no failed job recorded")
	}
}
