package storetest

import (
	"errors"
	"maps"

	"github.com/laraworker/laraworker/jobqueue"
)

// testPushDelay: a job pushed with a delay (later()) waits it out;
// PushMany pushes every job.
func testPushDelay(e *env) {
	raw, uuid := e.job(Served)
	e.pushRaw("default", raw, e.delay())
	e.claimNone("default", "right after a delayed push")
	if got := uuids(e.t, e.claimAfter(e.delay(), "default", 1)); got[0] != uuid {
		e.t.Fatalf("after the delay claimed %s, want %s", got[0], uuid)
	}
	a, ua := e.job(Served)
	b, ub := e.job(Served)
	if err := e.s.PushMany(e.ctx, []jobqueue.PushItem{{Queue: e.q("many"), Payload: a}, {Queue: e.q("many"), Payload: b}}); err != nil {
		e.t.Fatalf("push many: %v", err)
	}
	if got := uuids(e.t, e.claimAfter(0, "many", 2)); !sameSet(got, []string{ua, ub}) {
		e.t.Fatalf("pushed many, claimed %v, want %s and %s", got, ua, ub)
	}
}

// testSizes: Sizes counts each queue's jobs by state, as queue:monitor.
func testSizes(e *env) {
	for range 3 {
		e.push("sized", Served)
	}
	raw, _ := e.job(Served)
	e.pushRaw("sized", raw, e.delay())
	e.push("other", Served)
	e.claim("sized", 1)
	s := e.size("sized")
	if s.Total() != 4 {
		e.t.Fatalf("sizes of sized: %+v, want 4 jobs", s)
	}
	if e.cfg.supports(OpSizesByState) && (s.Ready != 2 || s.Delayed != 1 || s.Reserved+s.Expired != 1) {
		e.t.Fatalf("sizes of sized: %+v, want 2 ready, 1 delayed, 1 reserved", s)
	}
	if o := e.size("other"); o.Total() != 1 {
		e.t.Fatalf("sizes of other: %+v, want 1 job", o)
	}
	if e.o.Clock != nil && e.cfg.supports(OpSizesByState) {
		e.expired()
		if s := e.size("sized"); s.Expired != 1 || s.Reserved != 0 {
			e.t.Fatalf("sizes after retry_after: %+v, want the reservation expired", s)
		}
	}
}

// testClear: queue:clear deletes every job of the queue, reserved ones
// too, and no other queue's.
func testClear(e *env) {
	for range 3 {
		e.push("cleared", Served)
	}
	e.push("kept", Served)
	e.claim("cleared", 1)
	n, err := e.s.Clear(e.ctx, e.q("cleared"))
	if !e.unsupported(OpClear, err) {
		return
	}
	if n != 3 {
		e.t.Fatalf("clear: %d, want 3 (reserved included)", n)
	}
	e.total("cleared", 0, "after clear")
	e.total("kept", 1, "another queue after clear")
	e.expired()
	e.claimNone("cleared", "after clear and retry_after")
}

// testMove: a move takes the unreserved jobs of the classes named from
// one queue to another, never a reserved one nor another class.
func testMove(e *env) {
	reserved := e.push("from", Served)
	waiting := []string{e.push("from", Served), e.push("from", Served)}
	other := e.push("from", Foreign)
	if got := uuids(e.t, e.claim("from", 1)); got[0] != reserved {
		e.t.Fatalf("claimed %s", got[0])
	}
	moved, err := e.s.Move(e.ctx, e.q("from"), e.q("to"), []string{Served})
	if !e.unsupported(OpMove, err) {
		return
	}
	if !maps.Equal(moved, map[string]int64{Served: 2}) && !maps.Equal(moved, map[string]int64{Served: 2, Foreign: 0}) {
		e.t.Fatalf("moved %v, want %s: 2", moved, Served)
	}
	if got := uuids(e.t, e.claimAfter(0, "to", 2)); !sameSet(got, waiting) {
		e.t.Fatalf("the target queue holds %v, want %v", got, waiting)
	}
	e.total("from", 2, "the source queue after the move (the reserved job and the other class)")
	if got := uuids(e.t, e.claim("from", 1)); got[0] != other {
		e.t.Fatalf("the source queue's ready job %s, want the other class's %s", got[0], other)
	}
}

// testCountClasses: the jobs of each class on a queue, by state, and the
// classes waiting on queues.
func testCountClasses(e *env) {
	e.push("counted", Served)
	e.push("counted", Served)
	e.push("counted", Foreign)
	e.claim("counted", 1)
	counts, err := e.s.CountClasses(e.ctx, e.q("counted"), []string{Served, Foreign})
	if e.unsupported(OpCountClasses, err) {
		got := map[string][2]int64{}
		for _, c := range counts {
			got[c.Class] = [2]int64{c.Unreserved, c.Reserved}
		}
		if want := map[string][2]int64{Served: {1, 1}, Foreign: {1, 0}}; !maps.Equal(got, want) {
			e.t.Fatalf("class counts %v, want %v", got, want)
		}
	}
	classes, read, err := e.s.ClassesOnQueues(e.ctx, e.qs("counted"), 100)
	if !e.unsupported(OpClassesOnQueues, err) {
		return
	}
	if classes[Foreign] != 1 || classes[Served] < 1 || read < 2 {
		e.t.Fatalf("classes on the queue %v (read %d), want %s and %s", classes, read, Served, Foreign)
	}
}

// testFindJob: `inspect --id` and `--uuid` find a queued job.
func testFindJob(e *env) {
	raw, uuid := e.job(Served)
	id := e.pushRaw("default", raw, 0)
	row, err := e.s.FindJob(e.ctx, id.Num)
	if e.unsupported(OpFindJob, err) && uuidOf(row.Payload) != uuid {
		e.t.Fatalf("find job %v: %s, want %s", id, uuidOf(row.Payload), uuid)
	}
	if e.cfg.supports(OpFindJob) {
		if _, err := e.s.FindJob(e.ctx, id.Num+1000); !errors.Is(err, jobqueue.ErrJobNotFound) {
			e.t.Fatalf("find of an unknown id: %v, want ErrJobNotFound", err)
		}
	}
	row, err = e.s.FindJobByUUID(e.ctx, uuid)
	if e.unsupported(OpFindJobByUUID, err) && uuidOf(row.Payload) != uuid {
		e.t.Fatalf("find job by uuid %s: %s", uuid, uuidOf(row.Payload))
	}
}

// failOne pushes, claims and fails a job on queue and returns its uuid.
func (e *env) failOne(queue string) string {
	e.t.Helper()
	uuid := e.push(queue, Served)
	row := e.claim(queue, 1)[0]
	if err := e.s.Fail(e.ctx, row, uuid, "E", jobqueue.Followup{}); err != nil {
		e.t.Fatalf("fail: %v", err)
	}
	return uuid
}

// testRetry: queue:retry pushes a failed job back onto its queue and
// forgets it; queue:retry --queue does so for one queue's failed jobs.
func testRetry(e *env) {
	first := e.failOne("retried")
	res, err := e.s.Retry(e.ctx, []string{first}, nil)
	if err != nil || len(res) != 1 || res[0].Err != nil {
		e.t.Fatalf("retry: %+v %v", res, err)
	}
	back := e.claimAfter(0, "retried", 1)[0]
	if uuidOf(back.Payload) != first || back.Attempts != 1 {
		e.t.Fatalf("retried job %s attempts %d, want %s with attempts 1", uuidOf(back.Payload), back.Attempts, first)
	}
	if _, err := e.s.FindFailed(e.ctx, first); !errors.Is(err, jobqueue.ErrFailedJobNotFound) {
		e.t.Fatalf("the retried job is still failed: %v", err)
	}
	if _, err := e.s.Delete(e.ctx, []jobqueue.JobRow{back}); err != nil {
		e.t.Fatal(err)
	}
	a, b, other := e.failOne("retried"), e.failOne("retried"), e.failOne("elsewhere")
	res, err = e.s.RetryAll(e.ctx, e.recorded("retried"), nil)
	if err != nil || len(res) != 2 {
		e.t.Fatalf("retry all of a queue: %+v %v", res, err)
	}
	if got := uuids(e.t, e.claimAfter(0, "retried", 2)); !sameSet(got, []string{a, b}) {
		e.t.Fatalf("retried %v, want %s and %s", got, a, b)
	}
	if f := e.failed(); len(f) != 1 || f[0].UUID != other {
		e.t.Fatalf("failed jobs after retrying one queue's: %+v, want %s only", f, other)
	}
}

// testForgetFlush: queue:forget deletes one failed job, queue:flush all.
func testForgetFlush(e *env) {
	a, b, c := e.failOne("default"), e.failOne("default"), e.failOne("default")
	if ok, err := e.s.Forget(e.ctx, a); err != nil || !ok {
		e.t.Fatalf("forget %s: %v %v", a, ok, err)
	}
	if ok, err := e.s.Forget(e.ctx, a); err != nil || ok {
		e.t.Fatalf("forget of a forgotten job: %v %v, want false", ok, err)
	}
	if _, err := e.s.FindFailed(e.ctx, a); !errors.Is(err, jobqueue.ErrFailedJobNotFound) {
		e.t.Fatalf("find of a forgotten job: %v", err)
	}
	left := []string{}
	for _, f := range e.failed() {
		left = append(left, f.UUID)
	}
	if !sameSet(left, []string{b, c}) {
		e.t.Fatalf("failed jobs after forget: %v, want %s and %s", left, b, c)
	}
	if n, err := e.s.Flush(e.ctx, 0); err != nil || n != 2 {
		e.t.Fatalf("flush: %d %v, want 2", n, err)
	}
	if f := e.failed(); len(f) != 0 {
		e.t.Fatalf("%d failed jobs after flush", len(f))
	}
}
