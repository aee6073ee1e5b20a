package database

import (
	"database/sql"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// isolation reads the session's isolation level under either variable
// name (transaction_isolation on MySQL 8 and MariaDB 11.1+, tx_isolation
// before).
func isolation(t *testing.T, e *testEnv, tx *sql.Tx) string {
	t.Helper()
	var level string
	for _, v := range []string{"@@session.transaction_isolation", "@@session.tx_isolation"} {
		if err := tx.QueryRowContext(e.ctx, "select "+v).Scan(&level); err == nil {
			return level
		}
	}
	t.Fatal("no isolation variable")
	return ""
}

func TestMySQLRunsAtReadCommitted(t *testing.T) {
	e := newEnv(t, appconfig.EngineMySQL)
	err := e.q.inTx(e.ctx, func(tx *sql.Tx, _ int) error {
		if got := isolation(t, e, tx); got != "READ-COMMITTED" {
			t.Errorf("transaction at %s, want READ-COMMITTED", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A pool the caller opened keeps its own session level, so the queue
	// asks for READ COMMITTED on each of its transactions instead.
	own, err := sql.Open("mysql", testdsn.MySQLDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close() })
	q2 := openEnv(t, appconfig.EngineMySQL, engineConfig(t, appconfig.EngineMySQL, t.TempDir()), Options{DB: own}).q
	if opts := q2.txOptions(); opts == nil || opts.Isolation != sql.LevelReadCommitted {
		t.Fatalf("transactions on a given pool use %+v, want READ COMMITTED", opts)
	}
	if q2.conn.SingleStatementSafe() || q2.singleStatementSafe {
		t.Fatal("single statements on a given pool are taken to run at READ COMMITTED")
	}
}
