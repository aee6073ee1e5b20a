package sqldb

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// engineConfigs are the servers whose sessions Open bounds.
func engineConfigs(t *testing.T) map[string]func(t *testing.T) appconfig.Config {
	t.Helper()
	cfg := func(driver string, srv testdsn.Server) appconfig.Config {
		return appconfig.Config{Driver: driver, Host: srv.Host, Port: srv.Port, Socket: srv.Socket,
			Database: srv.Database, Username: srv.User, Password: appconfig.Secret(srv.Password)}
	}
	return map[string]func(t *testing.T) appconfig.Config{
		"mariadb": func(t *testing.T) appconfig.Config { return cfg(appconfig.EngineMySQL, testdsn.MySQL(t)) },
		"pgsql":   func(t *testing.T) appconfig.Config { return cfg(appconfig.EnginePgSQL, testdsn.PostgreSQL(t)) },
	}
}

// TestAbandonedClaimReleasesItsLocks is a worker frozen inside a claim
// (the locking select sent, the reserve not yet): its row locks must go
// within the bound, so another worker's `for update skip locked` takes
// the row; and the frozen session's next statement fails instead of
// committing anything.
func TestAbandonedClaimReleasesItsLocks(t *testing.T) {
	for name, config := range engineConfigs(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := config(t)
			frozen, err := Open(ctx, cfg, Options{AbandonedTxTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer frozen.Close()
			other, err := Open(ctx, cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			table := "abandoned_" + testdsn.Suffix(t)
			mustExec(t, other.Pool, "create table "+table+" (id int primary key)")
			defer mustExec(t, other.Pool, "drop table "+table)
			mustExec(t, other.Pool, "insert into "+table+" (id) values (1)")
			lockRow := "select id from " + table + " where id = 1 for update skip locked"

			tx, err := frozen.Pool.BeginTx(ctx, frozen.TxOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() // before the drop, which waits for the lock
			var id int
			if err := tx.QueryRowContext(ctx, lockRow).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if takes(ctx, other.Pool, lockRow) {
				t.Fatal("another session took the row while the claim held it")
			}
			testwait.Until(t, 20*time.Second, "the abandoned claim's lock to go", func() bool { return takes(ctx, other.Pool, lockRow) })
			if _, err := tx.ExecContext(ctx, "delete from "+table+" where id = 1"); err == nil {
				if err := tx.Commit(); err == nil {
					t.Fatal("the abandoned session's transaction committed after its locks went")
				}
			} else {
				_ = tx.Rollback()
			}
			if n := count(t, other.Pool, "select count(*) from "+table); n != 1 {
				t.Fatalf("%d rows left, want the one the abandoned claim did not delete", n)
			}
		})
	}
}

// TestSessionsBoundIdleTransactionsByDefault: Open's own sessions carry
// the ten-second bound, whatever the server's default.
func TestSessionsBoundIdleTransactionsByDefault(t *testing.T) {
	queries := map[string]string{
		"mariadb": "select @@session.idle_transaction_timeout",
		"pgsql":   "select current_setting('idle_in_transaction_session_timeout')",
	}
	want := map[string]string{"mariadb": "10", "pgsql": "10s"}
	for name, config := range engineConfigs(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			db, err := Open(ctx, config(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var got string
			if err := db.Pool.QueryRowContext(ctx, queries[name]).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want[name] {
				t.Fatalf("the session's bound is %q, want %q", got, want[name])
			}
		})
	}
}

// takes reports whether a skip-locked select on another session returns
// the row, holding it only for that statement's transaction.
func takes(ctx context.Context, pool *sql.DB, query string) bool {
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return false
	}
	defer tx.Rollback()
	var id int
	return tx.QueryRowContext(ctx, query).Scan(&id) == nil
}

func mustExec(t *testing.T, pool *sql.DB, query string) {
	t.Helper()
	if _, err := pool.Exec(query); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, pool *sql.DB, query string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStricterSessionBoundIsKept: a session whose server (or user)
// already ends idle transactions sooner keeps that bound.
func TestStricterSessionBoundIsKept(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testdsn.MySQL(t)
	mc := mysqlConfig(appconfig.Config{Driver: appconfig.EngineMySQL, Host: srv.Host, Port: srv.Port, Socket: srv.Socket,
		Database: srv.Database, Username: srv.User, Password: appconfig.Secret(srv.Password)})
	mc.Params = map[string]string{"idle_transaction_timeout": "3"} // as a stricter server default would
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(sessionConnector{conn, DefaultAbandonedTxTimeout})
	defer pool.Close()
	var got int
	if err := pool.QueryRowContext(ctx, "select @@session.idle_transaction_timeout").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != 3 {
		t.Fatalf("the session's bound is %d s, want the stricter 3 s it had", got)
	}
}
