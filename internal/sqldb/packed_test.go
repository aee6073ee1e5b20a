package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// countingConn counts the writes a connection makes: one per command the
// driver sends, so one per round trip.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// packedEnv is a MySQL pool as Open builds it, whose connections count
// their writes, and a table of four rows.
type packedEnv struct {
	db     *DB
	other  *sql.DB // a second pool, for another session's view
	table  string
	writes *atomic.Int64
	ctx    context.Context
}

func newPackedEnv(t *testing.T) *packedEnv {
	t.Helper()
	srv := testdsn.MySQL(t)
	cfg := appconfig.Config{Driver: appconfig.EngineMySQL, Host: srv.Host, Port: srv.Port, Socket: srv.Socket,
		Database: srv.Database, Username: srv.User, Password: appconfig.Secret(srv.Password)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	writes := new(atomic.Int64)
	mc := mysqlConfig(cfg)
	mc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c, writes}, nil
	}
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(sessionConnector{conn, DefaultAbandonedTxTimeout})
	t.Cleanup(func() { pool.Close() })
	if err := pool.PingContext(ctx); err != nil {
		if !testdsn.Required() {
			t.Skipf("mysql not reachable: %v", err)
		}
		t.Fatal(err)
	}
	other, err := Open(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	e := &packedEnv{db: &DB{Pool: pool, Dialect: mysqlDialect{}, Now: time.Now, retry: DefaultRetryPolicy,
		sessionReadCommitted: true, multiStatements: true}, other: other.Pool,
		table: "packed_" + testdsn.Suffix(t), writes: writes, ctx: ctx}
	for _, q := range []string{
		"create table " + e.table + " (id int primary key, n int not null)",
		"insert into " + e.table + " values (1, 0), (2, 0), (3, 0), (4, 0)",
	} {
		if _, err := e.other.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { e.other.ExecContext(context.Background(), "drop table "+e.table) })
	return e
}

// lockedElsewhere tells whether another session finds row id locked.
func (e *packedEnv) lockedElsewhere(t *testing.T, id int) bool {
	t.Helper()
	tx, err := e.other.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var got int
	err = tx.QueryRowContext(e.ctx, "select id from "+e.table+" where id = ? for update skip locked", id).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

func (e *packedEnv) n(t *testing.T, id int) int {
	t.Helper()
	var n int
	if err := e.other.QueryRowContext(e.ctx, "select n from "+e.table+" where id = ?", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// claimLike is a claim's shape: a locking select, then an update of what
// it returned, as the last statement.
func claimLike(t *testing.T, e *packedEnv, tx TxConn, last func(ctx context.Context, q string, args ...any) error) []int {
	t.Helper()
	rows, err := tx.QueryContext(e.ctx, "select id from "+e.table+" where n = ? order by id limit 2 for update skip locked", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if !e.lockedElsewhere(t, ids[0]) {
		t.Fatalf("row %d not locked after the transaction's select", ids[0])
	}
	if err := last(e.ctx, "update "+e.table+" set n = n + 1 where id in (?, ?)", ids[0], ids[1]); err != nil {
		t.Fatalf("the last statement: %v", err)
	}
	return ids
}

// TestPackedTxIsTwoRoundTrips: a select-then-update transaction costs two
// round trips packed and four through database/sql, and commits the same.
func TestPackedTxIsTwoRoundTrips(t *testing.T) {
	e := newPackedEnv(t)
	// Warm one connection, so dialling and the handshake are not counted.
	if err := e.db.Pool.PingContext(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.db.Pool.SetMaxIdleConns(1)

	before := e.writes.Load()
	tx, err := e.db.Pool.BeginTx(e.ctx, e.db.TxOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	claimLike(t, e, tx, func(ctx context.Context, q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	plain := e.writes.Load() - before

	before = e.writes.Load()
	ptx, err := e.db.BeginPacked(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ptx.Close()
	ids := claimLike(t, e, ptx, ptx.ExecCommitContext)
	if err := ptx.Close(); err != nil {
		t.Fatal(err)
	}
	packed := e.writes.Load() - before
	if plain != 4 || packed != 2 {
		t.Fatalf("round trips: database/sql transaction %d, packed %d; want 4 and 2", plain, packed)
	}
	if e.n(t, ids[0]) != 1 || e.n(t, ids[1]) != 1 || e.lockedElsewhere(t, ids[0]) {
		t.Fatalf("the packed transaction's update is not committed, or its lock still held")
	}
}

// TestPackedTxRollsBackWhatFailed: a last statement that fails runs no
// COMMIT; Close rolls the transaction back, earlier writes included, and
// frees its locks.
func TestPackedTxRollsBackWhatFailed(t *testing.T) {
	e := newPackedEnv(t)
	tx, err := e.db.BeginPacked(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if _, err := tx.ExecContext(e.ctx, "update "+e.table+" set n = 5 where id = ?", 1); err != nil {
		t.Fatal(err)
	}
	if !e.lockedElsewhere(t, 1) {
		t.Fatal("the first statement did not begin a transaction: row 1 is not locked")
	}
	err = tx.ExecCommitContext(e.ctx, "update "+e.table+" set no_such_column = 1 where id = ?", 2)
	if err == nil {
		t.Fatal("a statement on a missing column did not fail")
	}
	if err := tx.Close(); err != nil {
		t.Fatal(err)
	}
	if e.n(t, 1) != 0 || e.lockedElsewhere(t, 1) {
		t.Fatalf("after a failed last statement: n = %d, locked %v; want the update rolled back and the lock freed", e.n(t, 1), e.lockedElsewhere(t, 1))
	}
}

// TestPackedTxDropsAConnectionItCannotRollBack: when the rollback itself
// fails (the session was killed), the connection is closed, never pooled.
func TestPackedTxDropsAConnectionItCannotRollBack(t *testing.T) {
	e := newPackedEnv(t)
	tx, err := e.db.BeginPacked(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := tx.QueryRowContext(e.ctx, "select connection_id()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := e.other.ExecContext(e.ctx, "kill ?", id); err != nil {
		t.Fatal(err)
	}
	if err := tx.Close(); err == nil {
		t.Fatal("Close after the session was killed reported no error")
	}
	if open := e.db.Pool.Stats().OpenConnections; open != 0 {
		t.Fatalf("%d connections open after dropping the killed one; want 0", open)
	}
	// The pool still works, on a new connection.
	if err := e.db.Pool.PingContext(e.ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCanPackOnlyOpensOwnMySQLPools: a pool given in Options.DB is not
// assumed to allow several statements per query.
func TestCanPackOnlyOpensOwnMySQLPools(t *testing.T) {
	e := newPackedEnv(t)
	srv := testdsn.MySQL(t)
	cfg := appconfig.Config{Driver: appconfig.EngineMySQL, Host: srv.Host, Port: srv.Port, Socket: srv.Socket,
		Database: srv.Database, Username: srv.User, Password: appconfig.Secret(srv.Password)}
	own, err := Open(e.ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	given, err := Open(e.ctx, cfg, Options{DB: e.other})
	if err != nil {
		t.Fatal(err)
	}
	if !own.CanPack() || given.CanPack() {
		t.Fatalf("CanPack: own pool %v, given pool %v; want true and false", own.CanPack(), given.CanPack())
	}
	if _, err := given.BeginPacked(e.ctx); err == nil {
		t.Fatal("BeginPacked on a given pool did not fail")
	}
}
