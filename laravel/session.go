package laravel

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
)

// readCommittedConnector sets READ COMMITTED once per new MySQL/MariaDB
// connection. Transactions then begin with a bare START TRANSACTION (the
// driver would otherwise send SET TRANSACTION ISOLATION LEVEL first, one
// more round trip per transaction), and single statements run outside a
// transaction at the same level as the transactions.
type readCommittedConnector struct {
	driver.Connector
}

const setReadCommitted = "set session transaction isolation level read committed"

func (c readCommittedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("laravel: the mysql driver cannot execute statements on a new connection")
	}
	if _, err := ex.ExecContext(ctx, setReadCommitted, nil); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// txOptions are the dialect's, unless the connections already run at that
// level (pools opened by Open; a pool given in Options.DB is not assumed to).
func (q *Queue) txOptions() *sql.TxOptions {
	if q.sessionReadCommitted {
		return nil
	}
	return q.d.TxOptions()
}

// singleStatementSafe reports whether one statement outside a transaction
// runs under the same isolation as the queue's transactions.
func (q *Queue) singleStatementSafe() bool {
	return q.d.TxOptions() == nil || q.sessionReadCommitted
}

// retrying runs op, re-running it on a retryable error with jittered
// exponential backoff, as every transaction is. Errors the app's setup
// causes come back wrapped with ErrMissingTable or ErrPermissionDenied.
func (q *Queue) retrying(ctx context.Context, op func(attempt int) error) error {
	for attempt := 1; ; attempt++ {
		err := op(attempt)
		if err == nil {
			return nil
		}
		if attempt >= q.retry.MaxAttempts || classify(q.d, err) != ErrRetryable {
			return explainSetup(q.d, err)
		}
		if werr := q.waitBackoff(ctx, attempt); werr != nil {
			return errors.Join(werr, err)
		}
	}
}
