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
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		r, due := startLoopReadRig(t, q)
		r.pauseAndResume(due)
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
