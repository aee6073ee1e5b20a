package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
)

// A packed transaction sends START TRANSACTION in the same packet as its
// first statement and COMMIT in the same packet as its last, so a
// select-then-update transaction (a claim) costs two round trips instead
// of four. It needs the driver's multi-statement mode, which only the
// MySQL/MariaDB pools Open creates have (PDO's MySQL driver, which Laravel
// uses, allows multiple statements by default too); the statements are
// the same ones, in the same order, as in a database/sql transaction.

const (
	packBegin  = "start transaction; "
	packCommit = "; commit"
	packUndo   = "rollback"
)

// CanPack reports whether this pool runs packed transactions: a MySQL or
// MariaDB pool opened by Open (a pool given in Options.DB is not assumed
// to allow multiple statements per query).
func (db *DB) CanPack() bool { return db.multiStatements }

// TxConn is what a transaction's statements run on: *sql.Tx or a packed
// transaction.
type TxConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// PackedTx is a packed transaction on one connection of the pool. Its
// first QueryContext begins it; ExecCommitContext runs its last
// statement and commits; Close rolls back whatever is still open and
// gives the connection back (or drops it when the rollback failed, so a
// connection holding locks never returns to the pool).
type PackedTx struct {
	conn   *sql.Conn
	begun  bool
	done   bool
	closed bool
}

var _ TxConn = (*PackedTx)(nil)

// BeginPacked takes a connection for a packed transaction; nothing is
// sent until its first statement.
func (db *DB) BeginPacked(ctx context.Context) (*PackedTx, error) {
	if !db.multiStatements {
		return nil, errors.New("sqldb: packed transactions need a MySQL pool opened by sqldb.Open")
	}
	conn, err := db.Pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &PackedTx{conn: conn}, nil
}

// InPackedTx runs fn in a packed transaction, re-run on a retryable
// error as InTx runs a database/sql transaction: fn ends it with
// ExecCommitContext, or it is rolled back.
func (db *DB) InPackedTx(ctx context.Context, fn func(tx *PackedTx, attempt int) error) error {
	return db.Retrying(ctx, func(attempt int) error {
		tx, err := db.BeginPacked(ctx)
		if err != nil {
			return err
		}
		defer tx.Close()
		return fn(tx, attempt)
	})
}

// QueryContext runs a query in the transaction; the first statement
// carries START TRANSACTION (the driver skips its empty result).
func (t *PackedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	query = t.opening(query)
	return t.conn.QueryContext(ctx, query, args...)
}

// QueryRowContext is QueryContext for one row.
func (t *PackedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	query = t.opening(query)
	return t.conn.QueryRowContext(ctx, query, args...)
}

// ExecContext runs a statement in the transaction.
func (t *PackedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	query = t.opening(query)
	return t.conn.ExecContext(ctx, query, args...)
}

// ExecCommitContext runs the transaction's last statement with COMMIT
// after it. When the statement fails the server runs nothing after it:
// the transaction is still open, for Close to roll back.
func (t *PackedTx) ExecCommitContext(ctx context.Context, query string, args ...any) error {
	query = t.opening(query) + packCommit
	if _, err := t.conn.ExecContext(ctx, query, args...); err != nil {
		return err
	}
	t.done = true
	return nil
}

// opening prefixes the transaction's first statement with its begin.
func (t *PackedTx) opening(query string) string {
	if t.begun {
		return query
	}
	t.begun = true
	return packBegin + query
}

// Close ends the transaction: rolled back unless ExecCommitContext
// committed it. The connection goes back to the pool only when the
// server confirmed the transaction's end. Closing again does nothing.
func (t *PackedTx) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	var err error
	if t.begun && !t.done {
		// A context of its own: the caller's may be what ended the
		// transaction early.
		_, err = t.conn.ExecContext(context.Background(), packUndo)
	}
	if err != nil {
		// driver.ErrBadConn makes database/sql close the connection
		// instead of pooling it with a transaction possibly open.
		_ = t.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return errors.Join(err, t.conn.Close())
}
