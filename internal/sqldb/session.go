package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"time"
)

// sessionConnector sets READ COMMITTED once per new MySQL/MariaDB
// connection. Transactions then begin with a bare START TRANSACTION (the
// driver would otherwise send SET TRANSACTION ISOLATION LEVEL first, one
// more round trip per transaction), and single statements run outside a
// transaction at the same level as the transactions. It also bounds how
// long the session may sit idle in a transaction (abandoned.go).
type sessionConnector struct {
	driver.Connector
	abandonedTx time.Duration
}

const setReadCommitted = "set session transaction isolation level read committed"

func (c sessionConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("sqldb: the mysql driver cannot execute statements on a new connection")
	}
	if _, err := ex.ExecContext(ctx, setReadCommitted, nil); err != nil {
		conn.Close()
		return nil, err
	}
	if err := setAbandonedTxTimeout(ctx, ex, c.abandonedTx); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// TxOptions are the dialect's, unless the connections already run at that
// level (pools opened by Open; a pool given in Options.DB is not assumed to).
func (db *DB) TxOptions() *sql.TxOptions {
	if db.sessionReadCommitted {
		return nil
	}
	return db.Dialect.TxOptions()
}

// SingleStatementSafe reports whether one statement outside a transaction
// runs under the same isolation as the queue's transactions.
func (db *DB) SingleStatementSafe() bool {
	return db.Dialect.TxOptions() == nil || db.sessionReadCommitted
}

// Retrying runs op, re-running it on a retryable error with jittered
// exponential backoff, as every transaction is. Errors the app's setup
// causes come back wrapped with their setup error (ExplainSetup).
func (db *DB) Retrying(ctx context.Context, op func(attempt int) error) error {
	for attempt := 1; ; attempt++ {
		err := op(attempt)
		if err == nil {
			return nil
		}
		if attempt >= db.retry.MaxAttempts || classify(db.Dialect, err) != ErrRetryable {
			return db.ExplainSetup(err)
		}
		if werr := db.waitBackoff(ctx, attempt); werr != nil {
			return errors.Join(werr, err)
		}
	}
}

// InTx runs fn in a transaction, re-running the whole transaction on a
// retryable error with jittered exponential backoff. fn must be
// idempotent per attempt: everything it did is rolled back before a retry.
func (db *DB) InTx(ctx context.Context, fn func(tx *sql.Tx, attempt int) error) error {
	return db.Retrying(ctx, func(attempt int) error { return db.TryTx(ctx, fn, attempt) })
}

// waitBackoff sleeps before the next try, or returns ctx's error.
func (db *DB) waitBackoff(ctx context.Context, attempt int) error {
	t := time.NewTimer(db.retry.backoff(attempt))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// TryTx runs fn in one transaction, once: rolled back on error, else
// committed.
func (db *DB) TryTx(ctx context.Context, fn func(tx *sql.Tx, attempt int) error, attempt int) error {
	tx, err := db.Pool.BeginTx(ctx, db.TxOptions())
	if err != nil {
		return err
	}
	if err := fn(tx, attempt); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
