package storetest

import (
	"slices"
	"strings"

	"github.com/laraworker/laraworker/jobqueue"
)

// testClaimFIFO: a queue's jobs are claimed in the order they were
// pushed, one at a time and several in one claim, each on the queue it
// was claimed from.
func testClaimFIFO(e *env) {
	var pushed []string
	for range 6 {
		pushed = append(pushed, e.push("default", Served))
	}
	var got []string
	for range 2 {
		row := e.claim("default", 1)[0]
		if row.Queue != e.recorded("default") {
			e.t.Fatalf("claimed job's queue %q, want %q", row.Queue, e.recorded("default"))
		}
		got = append(got, uuidOf(row.Payload))
	}
	got = append(got, uuids(e.t, e.claim("default", 4))...)
	if !e.cfg.supports(OpFIFO) {
		if !sameSet(got, pushed) {
			e.t.Fatalf("claimed %v, pushed %v", got, pushed)
		}
		return
	}
	if !slices.Equal(got, pushed) {
		e.t.Fatalf("claimed in the order %v, pushed %v", got, pushed)
	}
	e.claimNone("default", "every job claimed")
}

// testClaimPriority: a claim of several queues takes from the first that
// has jobs, as Laravel's worker does with --queue=high,low, and only from
// it; the next queue's jobs come once the first is empty.
func testClaimPriority(e *env) {
	low := []string{e.push("low", Served), e.push("low", Served)}
	high := e.push("high", Served)
	rows := e.claimOpts([]string{"high", "low"}, 3, jobqueue.ClaimOptions{})
	if got := uuids(e.t, rows); !slices.Equal(got, []string{high}) {
		e.t.Fatalf("claim of high,low with high's job pushed last took %v, want high's only (%s)", got, high)
	}
	rows = e.claimOpts([]string{"high", "low"}, 3, jobqueue.ClaimOptions{})
	if got := uuids(e.t, rows); !slices.Equal(got, low) || rows[0].Queue != e.recorded("low") {
		e.t.Fatalf("claim with high empty took %v, want low's %v", got, low)
	}
}

// testClaimSkipsClasses: a worker that serves some classes claims only
// those (matched without regard to case, as PHP's class names), never one
// it excludes, and the others stay queued for PHP's workers (the foreign
// job behind the served one here; at the head, see
// testClaimLooksPastForeignHead).
func testClaimSkipsClasses(e *env) {
	served := e.push("default", Served)
	foreign := e.push("default", Foreign)
	lower := jobqueue.ClaimOptions{DisplayNames: []string{strings.ToLower(Served)}}
	if !e.cfg.supports(OpClassesWithoutCase) {
		if rows := e.claimOpts([]string{"default"}, 5, lower); len(rows) != 0 {
			e.t.Fatalf("the store declares its class match case-sensitive, but a claim of %s took %v", lower.DisplayNames, uuids(e.t, rows))
		}
	}
	only := jobqueue.ClaimOptions{DisplayNames: []string{Served}}
	if e.cfg.supports(OpClassesWithoutCase) {
		only = lower
	}
	rows := e.claimOpts([]string{"default"}, 5, only)
	if got := uuids(e.t, rows); !slices.Equal(got, []string{served}) {
		e.t.Fatalf("claim serving %s took %v, want %s only", Served, got, served)
	}
	if rows := e.claimOpts([]string{"default"}, 5, only); len(rows) != 0 {
		e.t.Fatalf("claim serving %s took %v after its job was claimed", Served, uuids(e.t, rows))
	}
	excluded := jobqueue.ClaimOptions{ExcludeDisplayNames: []string{Foreign}}
	if rows := e.claimOpts([]string{"default"}, 5, excluded); len(rows) != 0 {
		e.t.Fatalf("claim excluding %s took %v", Foreign, uuids(e.t, rows))
	}
	// The foreign job is still there for PHP's workers.
	rows = e.claim("default", 1)
	if uuidOf(rows[0].Payload) != foreign {
		e.t.Fatalf("the unfiltered claim took %s, want the foreign job %s", uuidOf(rows[0].Payload), foreign)
	}
}

// testClaimLooksPastForeignHead: a job the worker does not serve at the
// head of a queue does not stop the served jobs behind it, on the first
// claim and on the next ones, and the foreign job keeps its place.
func testClaimLooksPastForeignHead(e *env) {
	foreign := e.push("default", Foreign)
	var served []string
	for range 3 {
		served = append(served, e.push("default", Served))
	}
	only := jobqueue.ClaimOptions{DisplayNames: []string{Served}}
	if !e.cfg.supports(OpLookPastForeignHead) {
		if rows := e.claimOpts([]string{"default"}, 3, only); len(rows) != 0 {
			e.t.Fatalf("the store declares it cannot look past a foreign head, but a claim took %v", uuids(e.t, rows))
		}
		e.total("default", 4, "the foreign head and the jobs behind it")
		return
	}
	// A store may spend a claim giving the foreign job back (SQS sends
	// it again behind the others): a few claims more than jobs.
	var got []string
	for i := 0; i < 6 && len(got) < 3; i++ {
		got = append(got, uuids(e.t, e.claimOpts([]string{"default"}, 1, only))...)
	}
	if len(got) != 3 {
		e.t.Fatalf("6 claims behind a foreign head took %v, want %v", got, served)
	}
	if e.cfg.supports(OpFIFO) && !slices.Equal(got, served) || !sameSet(got, served) {
		e.t.Fatalf("claimed %v behind the foreign head, want %v in order", got, served)
	}
	if got := uuids(e.t, e.claim("default", 1)); got[0] != foreign {
		e.t.Fatalf("foreign job gone: the queue's next job is %s", got[0])
	}
}

// testClaimCountsAttempt: each claim counts an attempt, as Laravel's
// pop does; a released job comes back with the attempts it had, and the
// claim carries a reservation its writes are fenced by.
func testClaimCountsAttempt(e *env) {
	e.push("default", Served)
	row := e.claim("default", 1)[0]
	if row.Attempts != 1 || row.ReservedAt == nil {
		e.t.Fatalf("first claim: attempts %d, reserved_at %v; want 1 and a reservation", row.Attempts, row.ReservedAt)
	}
	if n, err := e.s.CountClaimable(e.ctx, e.qs("default"), jobqueue.ClaimOptions{}); err != nil || n != 0 {
		e.t.Fatalf("claimable while reserved: %d %v", n, err)
	}
	for want := 2; want <= 3; want++ {
		if err := e.s.Release(e.ctx, row, 0); err != nil {
			e.t.Fatalf("release: %v", err)
		}
		row = e.claimAfter(0, "default", 1)[0]
		if row.Attempts != want {
			e.t.Fatalf("claim after %d release(s): attempts %d, want %d", want-1, row.Attempts, want)
		}
	}
}

// testUnreserve: a job given back untouched (not this worker's to run)
// is claimable again with its attempt not counted; a claim that excludes
// its id leaves it.
func testUnreserve(e *env) {
	uuid := e.push("default", Served)
	row := e.claim("default", 1)[0]
	if err := e.s.Unreserve(e.ctx, row); err != nil {
		e.t.Fatalf("unreserve: %v", err)
	}
	n, err := e.s.CountClaimable(e.ctx, e.qs("default"), jobqueue.ClaimOptions{})
	if err != nil || n != 1 {
		e.t.Fatalf("claimable after unreserve: %d %v, want 1", n, err)
	}
	again := e.claimAfter(0, "default", 1)[0]
	if uuidOf(again.Payload) != uuid || again.Attempts != 1 {
		e.t.Fatalf("after unreserve: job %s attempts %d, want %s with attempts 1", uuidOf(again.Payload), again.Attempts, uuid)
	}
}
