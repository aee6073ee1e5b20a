package fleet

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/store/database"
)

// TestPausesReadBeforeEachClaim: the worker's claim loop reads the
// pauses (worker.Config.BeforeClaim) once the last read is
// PollEvery old, and applies them to the claims that follow: a job pushed
// to a paused worker, or to a paused queue, is not claimed. Run reads
// nothing meanwhile (its beat is an hour away): a worker whose loop did
// not read would never pause. Clearing the pause resumes the paused
// worker (its loop reads while paused).
func TestPausesReadBeforeEachClaim(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		const every = time.Minute
		var offset atomic.Int64 // the heartbeat's clock, moved by the test
		base := time.Now()
		hb := &Heartbeat{Every: time.Hour, PollEvery: every,
			Now: func() time.Time { return base.Add(time.Duration(offset.Load())) }}
		r := startPauseRig(t, q, hb)
		s, w, ctx := r.s, r.w, context.Background()
		// due makes the next read due: the loop reads before its next claim.
		due := func() { offset.Add(int64(every)) }

		r.push("a")
		r.waitFor("the first job to run", func() bool { return w.Stats().Done == 1 })
		if err := s.SetPause(ctx, ScopeWorker, hb.ID(), time.Now()); err != nil {
			t.Fatal(err)
		}
		due()
		r.waitFor("the worker to pause", func() bool { return w.Stats().Paused })
		r.push("a")
		r.loopsPass("a claim loop after the push")
		if n := r.left("a"); n != 1 || w.Stats().Done != 1 {
			t.Fatalf("the paused worker ran a job: %d left on a, %d done", n, w.Stats().Done)
		}
		if err := s.ClearPause(ctx, ScopeWorker, hb.ID()); err != nil {
			t.Fatal(err)
		}
		due()
		r.waitFor("the resumed worker to run the job", func() bool { return r.left("a") == 0 })

		if err := s.SetPause(ctx, ScopeQueue, "b", time.Now()); err != nil {
			t.Fatal(err)
		}
		due()
		r.waitFor("queue b to pause", func() bool { return len(w.Stats().PausedQueues) == 1 })
		r.push("b")
		r.push("a")
		r.waitFor("queue a to drain", func() bool { return r.left("a") == 0 })
		r.loopsPass("a claim loop after queue a drained")
		if n := r.left("b"); n != 1 {
			t.Fatalf("paused queue b was claimed: %d left", n)
		}
		if err := s.ClearPause(ctx, ScopeQueue, "b"); err != nil {
			t.Fatal(err)
		}
		due()
		r.waitFor("queue b to drain", func() bool { return r.left("b") == 0 })
	})
}
