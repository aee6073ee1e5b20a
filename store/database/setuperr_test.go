package database

import (
	"errors"
	"testing"

	"github.com/laraworker/laraworker/jobqueue"
)

// A missing table is told apart from other errors on every engine, so a
// worker reports it as a setup problem instead of failing jobs.
func TestMissingTableIsASetupError(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.exec(t, "drop table "+e.quoted(e.cfg.FailedTable))
		e.insertRow(t, row{queue: "default", availableAt: e.clock.Unix()})
		job := claimOne(t, e, "default")
		err := e.q.Fail(e.ctx, *job, newUUID(t), "boom", jobqueue.Followup{})
		if err == nil {
			t.Fatal("fail into a missing failed_jobs succeeded")
		}
		if !errors.Is(err, jobqueue.ErrMissingTable) {
			t.Fatalf("fail into a missing failed_jobs: %v, want ErrMissingTable", err)
		}
		if errors.Is(err, jobqueue.ErrPermissionDenied) {
			t.Fatal("a missing table is not a permission problem")
		}
		e.exec(t, "drop table "+e.quoted(e.cfg.JobsTable))
		if _, err := e.q.Claim(e.ctx, []string{"default"}, 1, jobqueue.ClaimOptions{}); !errors.Is(err, jobqueue.ErrMissingTable) {
			t.Fatalf("claim on a missing jobs table: %v, want ErrMissingTable", err)
		}
		if _, err := e.q.CountClaimable(e.ctx, []string{"default"}, jobqueue.ClaimOptions{}); !errors.Is(err, jobqueue.ErrMissingTable) {
			t.Fatalf("count on a missing jobs table: %v, want ErrMissingTable", err)
		}
		// Recreate what the cleanup drops.
		if err := e.q.CreateTables(e.ctx); err != nil {
			t.Fatal(err)
		}
	})
}
