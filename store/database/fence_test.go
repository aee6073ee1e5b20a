package database

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

func (e *testEnv) setMode(t *testing.T, mode string) {
	e.q.exact = mode == "exact"
	returning := e.q.deleteReturning
	e.q.deleteReturning = returning && mode != "lock-then-delete"
	t.Cleanup(func() { e.q.exact, e.q.deleteReturning = false, returning })
}

// claimAll claims every ready job of queue in one claim (one token).
func claimAll(t *testing.T, e *testEnv, queue string, n int) []jobqueue.JobRow {
	t.Helper()
	jobs, err := e.q.Claim(e.ctx, []string{queue}, n, jobqueue.ClaimOptions{})
	if err != nil || len(jobs) != n {
		t.Fatalf("claimed %d of %d: %v", len(jobs), n, err)
	}
	return jobs
}

// reclaim is another worker reserving the job after retry_after: a new
// reserved_at, one more attempt.
func (e *testEnv) reclaim(t *testing.T, id int64) {
	t.Helper()
	e.exec(t, fmt.Sprintf("update %s set reserved_at = reserved_at + %d, attempts = attempts + 1 where id = ?",
		e.quoted(e.cfg.JobsTable), e.cfg.RetryAfter+1), id)
}

// finishElsewhere is another worker deleting the job after reclaiming it.
func (e *testEnv) finishElsewhere(t *testing.T, id int64) {
	t.Helper()
	e.exec(t, fmt.Sprintf("delete from %s where id = ?", e.quoted(e.cfg.JobsTable)), id)
}

func (e *testEnv) failedCount(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.q.db.QueryRowContext(e.ctx, "select count(*) from "+e.quoted(e.cfg.FailedTable)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func ids(jobs []jobqueue.JobRow) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	slices.Sort(out)
	return out
}

// TestDeleteIsFencedOnMySQL: of four claimed jobs, one was reclaimed by
// another worker and one finished by another worker; Delete removes the
// two still held, reports the other two lost and leaves the reclaimed row
// as the other worker has it, in the way Delete runs on MySQL, which has
// no DELETE ... RETURNING (forced here on MariaDB, which has it). The
// grouped and exact statements prove the same on every engine in the
// conformance suite (TestConformance, storetest's
// DeleteAfterALostReservationIsFenced).
func TestDeleteIsFencedOnMySQL(t *testing.T) {
	e := newEnv(t, appconfig.EngineMySQL)
	for _, mode := range []string{"lock-then-delete"} {
		e.setMode(t, mode)
		now := e.clock.Unix()
		for range 4 {
			e.insertRow(t, row{queue: mode, availableAt: now, createdAt: now})
		}
		jobs := claimAll(t, e, mode, 4)
		e.reclaim(t, jobs[1].ID)
		e.finishElsewhere(t, jobs[2].ID)
		before := *e.jobByID(t, jobs[1].ID)

		lost, err := e.q.Delete(e.ctx, jobs)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if got, want := ids(lost), ids(jobs[1:3]); !slices.Equal(got, want) {
			t.Fatalf("%s: lost %v, want %v", mode, got, want)
		}
		left := e.allJobs(t)
		if len(left) != 1 || left[0].ID != jobs[1].ID || !ptrEq(left[0].ReservedAt, before.ReservedAt) || left[0].Attempts != before.Attempts {
			t.Fatalf("%s: rows left %+v, want only the reclaimed one as the other worker has it (%+v)", mode, left, before)
		}
		e.finishElsewhere(t, jobs[1].ID)
	}
}

// TestDeleteGroupsByToken: jobs of two claims (two tokens) go in one call.
func TestDeleteGroupsByToken(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		for range 4 {
			e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
		}
		first := claimAll(t, e, "default", 2)
		e.clock.Set(e.clock.Now().Add(3 * time.Second))
		second := claimAll(t, e, "default", 2)
		e.reclaim(t, second[0].ID)
		lost, err := e.q.Delete(e.ctx, append(first, second...))
		if err != nil || len(lost) != 1 || lost[0].ID != second[0].ID {
			t.Fatalf("lost %+v, %v; want job %d", lost, err, second[0].ID)
		}
		if left := e.allJobs(t); len(left) != 1 {
			t.Fatalf("rows left: %+v", left)
		}
	})
}

// TestFinishWritesItsFollowupInOneTransaction: the next link and the batch
// success are written with the delete; when any part fails, none is.
func TestFinishWritesItsFollowupInOneTransaction(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		e.insertBatch(t, "b1", 1)
		id := e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
		j := claimOne(t, e, "default")
		next := testPayload(newUUID(t), `App\Jobs\Next`)
		if err := e.q.Finish(e.ctx, *j, jobqueue.Followup{Next: &jobqueue.PushItem{Queue: "links", Payload: next, Delay: 5 * time.Second}, Batch: &jobqueue.BatchEntry{ID: "b1", JobUUID: "u"}}); err != nil {
			t.Fatal(err)
		}
		left := e.allJobs(t)
		if len(left) != 1 || left[0].ID == id || left[0].Queue != "links" || left[0].Attempts != 0 || left[0].ReservedAt != nil || left[0].AvailableAt != now+5 || string(left[0].Payload) != string(next) {
			t.Fatalf("after Finish: %+v", left)
		}
		if b, err := e.q.FindBatch(e.ctx, "b1"); err != nil || b.PendingJobs != 0 || b.FinishedAt == nil {
			t.Fatalf("batch after Finish: %+v %v", b, err)
		}
		// A batch that is gone is skipped, as Laravel's null batch().
		e.clock.Set(e.clock.Now().Add(5 * time.Second))
		j = claimOne(t, e, "links")
		if err := e.q.Finish(e.ctx, *j, jobqueue.Followup{Batch: &jobqueue.BatchEntry{ID: "missing", JobUUID: "u"}}); err != nil {
			t.Fatalf("Finish with a vanished batch: %v", err)
		}
		// A failing batch write rolls the delete and the push back.
		e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
		j = claimOne(t, e, "default")
		e.exec(t, "drop table "+e.quoted(e.cfg.BatchesTable))
		if err := e.q.Finish(e.ctx, *j, jobqueue.Followup{Next: &jobqueue.PushItem{Payload: next}, Batch: &jobqueue.BatchEntry{ID: "b1", JobUUID: "u"}}); err == nil {
			t.Fatal("Finish with a broken batch table succeeded")
		}
		if left := e.allJobs(t); len(left) != 1 || left[0].ID != j.ID || left[0].ReservedAt == nil {
			t.Fatalf("after a failed Finish: %+v, want the job still reserved and no next link", left)
		}
	})
}

// TestFailRecordsTheBatchFailureWithIt: a failure without allowFailures
// cancels (finishes) the batch in the failing job's transaction.
func TestFailRecordsTheBatchFailureWithIt(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		e.insertBatch(t, "b1", 2)
		e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
		j := claimOne(t, e, "default")
		if err := e.q.Fail(e.ctx, *j, "u1", "E", jobqueue.Followup{Batch: &jobqueue.BatchEntry{ID: "b1", JobUUID: "u1"}}); err != nil {
			t.Fatal(err)
		}
		b, err := e.q.FindBatch(e.ctx, "b1")
		if err != nil || b.PendingJobs != 2 || b.FailedJobs != 1 || !slices.Equal(b.FailedJobIDs, []string{"u1"}) || b.CancelledAt == nil || b.FinishedAt == nil {
			t.Fatalf("batch after a failure: %+v %v", b, err)
		}
		if n := e.failedCount(t); n != 1 {
			t.Fatalf("%d failed_jobs rows", n)
		}
	})
}

// TestExtendHandsBackTheNewToken: Extend refreshes what is still held,
// returns the new reserved_at (which the next write must carry), leaves
// out what another worker reclaimed, and a later write with the new token
// goes through while one with the old token is refused.
func TestExtendHandsBackTheNewToken(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		for range 3 {
			e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
		}
		jobs := claimAll(t, e, "default", 3)
		// Refreshed in the same second as the claim: nothing to write.
		if got, err := e.q.Extend(e.ctx, jobs); err != nil || len(got) != 3 || !ptrEq(got[0].ReservedAt, i64(now)) {
			t.Fatalf("same-second extend: %+v %v", got, err)
		}
		e.clock.Set(e.clock.Now().Add(30 * time.Second))
		e.reclaim(t, jobs[2].ID)
		got, err := e.q.Extend(e.ctx, jobs)
		if err != nil || !slices.Equal(ids(got), ids(jobs[:2])) {
			t.Fatalf("extend: %+v %v; want jobs %v refreshed", got, err, ids(jobs[:2]))
		}
		for _, j := range got {
			if !ptrEq(j.ReservedAt, i64(now+30)) || !ptrEq(e.jobByID(t, j.ID).ReservedAt, i64(now+30)) {
				t.Fatalf("refreshed %+v, row %+v", j, e.jobByID(t, j.ID))
			}
		}
		if r := e.jobByID(t, jobs[2].ID); ptrEq(r.ReservedAt, i64(now+30)) {
			t.Fatal("extend refreshed a row another worker holds")
		}
		if err := e.q.Release(e.ctx, jobs[0], 0); !errors.Is(err, jobqueue.ErrReservationLost) {
			t.Fatalf("release with the token from before the refresh: %v", err)
		}
		if err := e.q.Release(e.ctx, got[0], 0); err != nil {
			t.Fatalf("release with the refreshed token: %v", err)
		}
	})
}

// TestWritesNeedAClaimedRow: a row without a reservation is a caller bug,
// refused with a message that says so.
func TestWritesNeedAClaimedRow(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite)
	j := jobqueue.JobRow{ID: 1}
	if err := e.q.Unreserve(e.ctx, j); !errors.Is(err, errNotClaimed) {
		t.Errorf("unreserve of an unclaimed row: %v", err)
	}
	if _, err := e.q.Delete(e.ctx, []jobqueue.JobRow{j}); !errors.Is(err, errNotClaimed) {
		t.Errorf("delete of an unclaimed row: %v", err)
	}
	if _, err := e.q.Extend(e.ctx, []jobqueue.JobRow{j}); !errors.Is(err, errNotClaimed) {
		t.Errorf("extend of an unclaimed row: %v", err)
	}
}

// TestFailOfARowItsClaimCouldNotReserve: a row failed as it was selected
// (reserved_at null) is fenced by "still unreserved": failed while nobody
// took it, left alone once somebody did.
func TestFailOfARowItsClaimCouldNotReserve(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		for _, mode := range []string{"grouped", "exact"} {
			e.setMode(t, mode)
			now := e.clock.Unix()
			id := e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
			selected := *e.jobByID(t, id)
			if err := e.q.Fail(e.ctx, selected, newUUID(t), "E", jobqueue.Followup{}); err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			if n := len(e.allJobs(t)); n != 0 || e.failedCount(t) != 1 {
				t.Fatalf("%s: %d rows, %d failed", mode, n, e.failedCount(t))
			}
			id = e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
			selected = *e.jobByID(t, id)
			claimOne(t, e, "default")
			if err := e.q.Fail(e.ctx, selected, newUUID(t), "E", jobqueue.Followup{}); !errors.Is(err, jobqueue.ErrReservationLost) {
				t.Fatalf("%s: fail of a row reserved since: %v", mode, err)
			}
			e.exec(t, "delete from "+e.quoted(e.cfg.JobsTable))
			e.exec(t, "delete from "+e.quoted(e.cfg.FailedTable))
		}
	})
}
