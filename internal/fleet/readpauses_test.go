package fleet

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// startLoopReadRig is the pause rig whose heartbeat never reads on a
// timer (its beat is an hour away) and whose clock the test moves: only
// the worker's claim loop asking (ReadPausesSoon) makes it read. due
// makes the next read due.
func startLoopReadRig(t *testing.T, q *database.Queue) (r *pauseRig, due func()) {
	const every = time.Minute
	var offset atomic.Int64
	base := time.Now()
	hb := &Heartbeat{Every: time.Hour, PollEvery: every,
		Now: func() time.Time { return base.Add(time.Duration(offset.Load())) }}
	return startPauseRig(t, q, hb), func() { offset.Add(int64(every)) }
}

// TestClaimLoopAsksForPauseReads: the worker's claim loop asks the
// heartbeat to read the pauses once the last read is PollEvery old, and
// they then hold for its claims: a job pushed to a paused worker, or to a
// paused queue, is not claimed. The heartbeat reads nothing on its own
// meanwhile: a worker whose loop did not ask would never pause. Clearing
// the pause resumes the paused worker (its loop asks while paused).
func TestClaimLoopAsksForPauseReads(t *testing.T) {
	t.Parallel() // waits on real time and child processes: beside the other waiting tests
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		r, due := startLoopReadRig(t, q)
		r.pauseAndResume(due)
	})
}

// TestClaimLoopAsksForBeats: the worker's row is written in the wake-up
// of its claims once the last beat is Every old, not on a timer of its
// own (which would wake an idle worker once more). Run's timer is an hour
// and a minute away in real time and the heartbeat's clock is the
// test's: only the claim loop asking (ReadPausesSoon) can write the row
// when the test moves the clock by Every, and the row's last_seen_at then
// shows the moved clock. Its jobs' counts go with the beat.
func TestClaimLoopAsksForBeats(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		var offset atomic.Int64
		base := time.Now()
		hb := &Heartbeat{Every: time.Hour, PollEvery: time.Minute,
			Now: func() time.Time { return base.Add(time.Duration(offset.Load())) }}
		r := startPauseRig(t, q, hb)
		r.push("a")
		r.waitFor("the job to run", func() bool { return r.w.Stats().Done == 1 })
		seen := func() (lastSeen, done int64) {
			rows, err := r.s.Workers(context.Background())
			if err != nil || len(rows) != 1 {
				t.Fatalf("workers: %v, %d rows", err, len(rows))
			}
			return rows[0].LastSeenAt, rows[0].Done
		}
		if at, done := seen(); at != base.Unix() || done != 0 {
			t.Fatalf("before a beat is due the row is Start's (%d, 0 done), got %d, %d done", base.Unix(), at, done)
		}
		offset.Add(int64(time.Hour))
		r.waitFor("a beat asked for by the claim loop", func() bool {
			at, done := seen()
			return at == base.Add(time.Hour).Unix() && done == 1
		})
	})
}

// TestBeatsWithoutClaimsAsking: a worker whose claim loop never asks for
// a beat (here the heartbeat's clock stands still, so none is ever due
// for the loop) is still written, by Run's own timer after Every +
// PollEvery: its job's count reaches the row.
func TestBeatsWithoutClaimsAsking(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		base := time.Now()
		hb := &Heartbeat{Every: 200 * time.Millisecond, PollEvery: 100 * time.Millisecond,
			Now: func() time.Time { return base }}
		r := startPauseRig(t, q, hb)
		r.push("a")
		r.waitFor("the job's count in the worker's row", func() bool {
			rows, err := r.s.Workers(context.Background())
			return err == nil && len(rows) == 1 && rows[0].Done == 1
		})
	})
}

// TestPauseReadThatHangsHoldsNoClaim: while the read of the pauses
// hangs (the pauses table locked by another session, so the heartbeat's
// select waits on the lock), the claim loop goes on claiming and running
// jobs: it asks for the read and never waits for it. A loop that read the
// pauses itself would stop with the read. MariaDB and PostgreSQL (SQLite
// readers do not wait for a writer).
func TestPauseReadThatHangsHoldsNoClaim(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		mysqlWait := "select count(*) from information_schema.processlist where state like 'Waiting for table%lock'"
		lockWait := map[string]string{
			appconfig.EngineMySQL:   mysqlWait,
			appconfig.EngineMariaDB: mysqlWait,
			appconfig.EnginePgSQL:   "select count(*) from pg_stat_activity where wait_event_type = 'Lock'",
		}[q.Config().Driver]
		if lockWait == "" {
			t.Skip("SQLite's readers do not wait for a lock")
		}
		r, due := startLoopReadRig(t, q)
		w, ctx := r.w, context.Background()
		r.push("a")
		r.waitFor("the first job to run", func() bool { return w.Stats().Done == 1 })

		release := lockTable(t, q, r.s.Tables().Pauses)
		defer release()
		due()
		r.waitFor("the pause read to wait on the lock", func() bool {
			var n int
			if err := q.DB().QueryRowContext(ctx, lockWait).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n > 0
		})
		for range 3 {
			r.push("a")
		}
		r.waitFor("the jobs pushed while the read hangs to run", func() bool { return w.Stats().Done == 4 })
	})
}

// lockTable locks table against reads from another session until release.
func lockTable(t *testing.T, q *database.Queue, table string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := q.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	name := q.Dialect().Quote(table)
	if d := q.Config().Driver; d == appconfig.EngineMySQL || d == appconfig.EngineMariaDB {
		if _, err := conn.ExecContext(ctx, "lock tables "+name+" write"); err != nil {
			t.Fatal(err)
		}
		return func() { _, _ = conn.ExecContext(ctx, "unlock tables"); conn.Close() }
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "lock table "+name+" in access exclusive mode"); err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback(); conn.Close() }
}
