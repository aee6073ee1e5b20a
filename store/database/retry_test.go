package database

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// lockRows runs a locking SELECT and discards its rows. (Exec of a SELECT
// hangs in go-sql-driver/mysql against MariaDB's prepared statements.)
func lockRows(ctx context.Context, tx sqldb.TxConn, query string, args ...any) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}

// shortLockWaitDB opens a pool whose lock waits time out after 1s, so a
// blocked claim fails with a real lock-wait error (MySQL 1205, PG 55P03,
// SQLite busy) and must be retried.
func shortLockWaitDB(t *testing.T, cfg appconfig.Config) *sql.DB {
	t.Helper()
	switch cfg.Driver {
	case appconfig.EngineMySQL:
		mc, err := mysql.ParseDSN(testdsn.MySQLDSN())
		if err != nil {
			t.Fatal(err)
		}
		mc.Params = map[string]string{"innodb_lock_wait_timeout": "1"}
		c, err := mysql.NewConnector(mc)
		if err != nil {
			t.Fatal(err)
		}
		return sql.OpenDB(c)
	case appconfig.EnginePgSQL:
		pc, err := pgx.ParseConfig(testdsn.PostgreSQLDSN())
		if err != nil {
			t.Fatal(err)
		}
		pc.RuntimeParams["lock_timeout"] = "1000"
		return stdlib.OpenDB(*pc)
	}
	db, err := sql.Open("sqlite", "file:"+cfg.Database+"?_pragma=busy_timeout(200)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestClaimRetriesAfterLockWait: another connection holds the only job's
// row lock (SQLite: the write lock) for 2.5s; the claim's lock wait times
// out, is retried, and succeeds once the blocker commits, counting one
// attempt.
func TestClaimRetriesAfterLockWait(t *testing.T) {
	for _, engine := range allEngines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			setup := newEnv(t, engine)
			cfg := setup.cfg
			// Plain "for update" so the claim waits instead of skipping.
			cfg.ServerVersion = map[string]string{appconfig.EngineMySQL: "8.0.0", appconfig.EnginePgSQL: "9.4", appconfig.EngineSQLite: ""}[engine]
			db := shortLockWaitDB(t, cfg)
			t.Cleanup(func() { db.Close() }) // runs after the tables are dropped
			e := openEnv(t, engine, cfg, Options{DB: db, Retry: sqldb.RetryPolicy{MaxAttempts: 20, BaseDelay: 50 * time.Millisecond, MaxDelay: 200 * time.Millisecond}})
			if engine != appconfig.EngineSQLite && e.q.LockClause() != sqldb.LockForUpdate {
				t.Fatalf("lock clause %q", e.q.LockClause())
			}
			now := e.clock.Unix()
			id := e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})

			blocker, err := setup.q.db.BeginTx(e.ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if engine == appconfig.EngineSQLite {
				// BEGIN IMMEDIATE (from the DSN) already holds the write lock;
				// touch the table to be sure.
				_, err = blocker.ExecContext(e.ctx, "update "+e.quoted(cfg.JobsTable)+" set created_at = created_at where id = ?", id)
			} else {
				err = lockRows(e.ctx, blocker, e.q.d.Rebind("select * from "+e.quoted(cfg.JobsTable)+" where id = ? for update"), id)
			}
			if err != nil {
				t.Fatal(err)
			}
			release := time.AfterFunc(2500*time.Millisecond, func() { blocker.Commit() })
			defer release.Stop()

			var attempts atomic.Int32
			e.q.testHookAfterSelect = func(context.Context, sqldb.TxConn, int) error { attempts.Add(1); return nil }
			start := time.Now()
			j, err := e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
			elapsed := time.Since(start)
			if err != nil || j == nil || j.ID != id {
				t.Fatalf("claim: %+v %v", j, err)
			}
			if elapsed < 2*time.Second {
				t.Fatalf("claim returned after %v; it should have waited for the blocker", elapsed)
			}
			if got := e.jobByID(t, id); got.Attempts != 1 {
				t.Fatalf("attempts = %d, want 1", got.Attempts)
			}
			t.Logf("claimed after %v", elapsed)
		})
	}
}

// TestClaimRetriesAfterDeadlock provokes a real deadlock between the claim
// transaction (holding job A, then wanting row B) and another transaction
// (holding B, then wanting A). The claim is made the victim (it has
// modified nothing; InnoDB rolls back the lighter transaction, PostgreSQL
// the one whose deadlock_timeout fires first), is retried, and A ends up
// with attempts 1.
func TestClaimRetriesAfterDeadlock(t *testing.T) {
	for _, engine := range []string{appconfig.EngineMySQL, appconfig.EnginePgSQL} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			setup := newEnv(t, engine)
			cfg := setup.cfg
			cfg.ServerVersion = map[string]string{appconfig.EngineMySQL: "8.0.0", appconfig.EnginePgSQL: "9.4"}[engine]
			e := openEnv(t, engine, cfg, Options{})
			now := e.clock.Unix()
			a := e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
			b := e.insertRow(t, row{queue: "other", availableAt: now, createdAt: now})
			for i := 0; i < 20; i++ {
				e.insertRow(t, row{queue: "scratch", availableAt: now, createdAt: now})
			}
			jobs := e.quoted(cfg.JobsTable)
			lockRow := e.q.d.Rebind("select * from " + jobs + " where id = ? for update")

			other, err := setup.q.db.BeginTx(e.ctx, e.q.d.TxOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer other.Rollback()
			if _, err := other.ExecContext(e.ctx, "update "+jobs+" set created_at = created_at + 1 where queue = 'scratch'"); err != nil {
				t.Fatal(err)
			}
			if err := lockRows(e.ctx, other, lockRow, b); err != nil {
				t.Fatal(err)
			}

			// The transactional claim (the one-statement claim has no
			// point between its select and its reserve).
			e.q.oneStatementClaims = false
			var sawDeadlock atomic.Bool
			var claimSession atomic.Int64
			waiting := make(chan struct{})
			e.q.testHookAfterSelect = func(ctx context.Context, tx sqldb.TxConn, attempt int) error {
				if attempt > 1 {
					return nil
				}
				var id int64
				if err := tx.QueryRowContext(ctx, sessionIDQuery(engine)).Scan(&id); err != nil {
					return err
				}
				claimSession.Store(id)
				close(waiting)
				err := lockRows(ctx, tx, lockRow, b) // waits for `other`
				if err != nil && e.q.Classify(err) == sqldb.ErrRetryable {
					sawDeadlock.Store(true)
				}
				return err
			}
			type result struct {
				j   *jobqueue.JobRow
				err error
			}
			done := make(chan result, 1)
			go func() {
				j, err := e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
				done <- result{j, err}
			}()
			testwait.Recv(t, waiting, time.Minute, "the claim's select")
			// The claim's transaction now asks for B's lock: wait until the
			// server shows a session waiting for a lock.
			if !testwait.Poll(time.Minute, func() bool { return waitsForALock(t, e, claimSession.Load()) }) {
				select {
				case r := <-done:
					t.Fatalf("the claim (session %d) never waited for B's lock: it returned %+v, %v; transactions: %s", claimSession.Load(), r.j, r.err, transactions(t, e))
				default:
					t.Fatalf("the claim (session %d) never waited for B's lock; transactions: %s", claimSession.Load(), transactions(t, e))
				}
			}
			if err := lockRows(e.ctx, other, lockRow, a); err != nil {
				t.Fatalf("the other transaction was chosen as victim: %v", err)
			}
			if err := other.Commit(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil || r.j == nil || r.j.ID != a {
				t.Fatalf("claim: %+v %v", r.j, r.err)
			}
			if !sawDeadlock.Load() {
				t.Fatal("no deadlock error was observed by the claim")
			}
			if got := e.jobByID(t, a); got.Attempts != 1 || !ptrEq(got.ReservedAt, i64(now)) {
				t.Fatalf("job A after claim: %+v", got)
			}
		})
	}
}

// TestLostConnectionClassified kills the session under a connection and
// checks the error is classified as a lost connection.
func TestLostConnectionClassified(t *testing.T) {
	for _, engine := range []string{appconfig.EngineMySQL, appconfig.EnginePgSQL} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, engine)
			conn, err := e.q.db.Conn(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var id int64
			idQuery := map[string]string{appconfig.EngineMySQL: "select connection_id()", appconfig.EnginePgSQL: "select pg_backend_pid()"}[engine]
			killQuery := map[string]string{appconfig.EngineMySQL: "kill ?", appconfig.EnginePgSQL: "select pg_terminate_backend($1)"}[engine]
			if err := conn.QueryRowContext(e.ctx, idQuery).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if _, err := e.q.db.ExecContext(e.ctx, killQuery, id); err != nil {
				t.Fatal(err)
			}
			// KILL and pg_terminate_backend act asynchronously: wait until
			// the server lists the session no more.
			testwait.Until(t, time.Minute, "the killed session to go", func() bool { return !sessionAlive(t, e, id) })
			_, err = conn.ExecContext(e.ctx, "select 1")
			if err == nil {
				t.Fatal("query on a killed session succeeded")
			}
			if c := e.q.Classify(err); c != sqldb.ErrLostConnection {
				t.Fatalf("error %v classified %v", err, c)
			}
			if e.q.Classify(context.Canceled) != sqldb.ErrOther || e.q.Classify(errors.New("syntax error")) != sqldb.ErrOther {
				t.Fatal("misclassified plain errors")
			}
		})
	}
}

// TestIdleInTransactionTimeoutIsALostConnection: PostgreSQL ends a session
// left idle inside a transaction past idle_in_transaction_session_timeout
// (SQLSTATE 25P03); the connection is gone, not the statement at fault.
func TestIdleInTransactionTimeoutIsALostConnection(t *testing.T) {
	e := newEnv(t, appconfig.EnginePgSQL)
	conn, err := e.q.db.Conn(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(e.ctx, "set idle_in_transaction_session_timeout = 100"); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var pid int64
	if err := tx.QueryRowContext(e.ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	// The server ends the session 100 ms after the transaction went idle.
	testwait.Until(t, time.Minute, "the server to end the idle transaction's session", func() bool { return !sessionAlive(t, e, pid) })
	_, err = tx.ExecContext(e.ctx, "select 1")
	if err == nil {
		t.Fatal("a statement after the idle-in-transaction timeout succeeded")
	}
	if c := e.q.Classify(err); c != sqldb.ErrLostConnection {
		t.Fatalf("error %v classified %v, want lost connection", err, c)
	}
}

// sessionIDQuery returns the session's id on the server.
func sessionIDQuery(engine string) string {
	if engine == appconfig.EnginePgSQL {
		return "select pg_backend_pid()"
	}
	return "select connection_id()"
}

// waitsForALock reports whether the server's session id waits for a row
// lock.
func waitsForALock(t *testing.T, e *testEnv, id int64) bool {
	t.Helper()
	query := "select count(*) from information_schema.innodb_trx where trx_state = 'LOCK WAIT' and trx_mysql_thread_id = ?"
	if e.engine == appconfig.EnginePgSQL {
		query = "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and pid = $1"
	}
	var n int
	if err := e.q.db.QueryRowContext(e.ctx, query, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// transactions lists the server's open transactions, for a failure's
// message.
func transactions(t *testing.T, e *testEnv) string {
	t.Helper()
	query := "select concat(trx_mysql_thread_id, ' ', trx_state, ' ', coalesce(trx_query, '')) from information_schema.innodb_trx"
	if e.engine == appconfig.EnginePgSQL {
		query = "select pid || ' ' || coalesce(wait_event_type, '') || ' ' || coalesce(query, '') from pg_stat_activity where xact_start is not null"
	}
	rows, err := e.q.db.QueryContext(e.ctx, query)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err.Error()
		}
		out = append(out, line)
	}
	return strings.Join(out, "; ")
}

// sessionAlive reports whether the server still lists a session (MySQL's
// connection id, PostgreSQL's backend pid).
func sessionAlive(t *testing.T, e *testEnv, id int64) bool {
	t.Helper()
	query := "select count(*) from information_schema.processlist where id = ?"
	if e.engine == appconfig.EnginePgSQL {
		query = "select count(*) from pg_stat_activity where pid = $1"
	}
	var n int
	if err := e.q.db.QueryRowContext(e.ctx, query, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}
