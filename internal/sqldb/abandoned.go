package sqldb

import (
	"context"
	"database/sql/driver"
	"errors"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// DefaultAbandonedTxTimeout is how long the server lets one of Open's
// connections sit idle inside a transaction before it ends the session,
// rolling the transaction back. A claim is two round trips (the locking
// select, then the reserve and COMMIT): a worker frozen (SIGSTOP, a
// paused container or VM) or cut off between them would otherwise keep
// its row locks until the server's wait_timeout (8 hours by default), and
// every other worker's `for update skip locked` passes those rows by: on
// MariaDB that includes the job the frozen worker was running, which
// then cannot be reclaimed after retry_after. No transaction of the
// worker waits on anything but the database between its statements, so
// ten seconds idle means the client is gone; the rolled-back claim
// reserved nothing.
const DefaultAbandonedTxTimeout = 10 * time.Second

// errUnknownSystemVariable is MySQL's ER_UNKNOWN_SYSTEM_VARIABLE: MySQL
// has no idle_transaction_timeout (MariaDB 10.3+ has).
const errUnknownSystemVariable = 1193

// boundIdleTransaction sets MariaDB's bound in seconds (both arguments),
// unless the session's is already stricter: a server that ends idle
// transactions sooner keeps doing so.
const boundIdleTransaction = "set session idle_transaction_timeout = " +
	"if(@@session.idle_transaction_timeout = 0, ?, least(@@session.idle_transaction_timeout, ?))"

// pgBoundIdleTransaction is PostgreSQL's, in milliseconds ($1), under
// the same rule.
const pgBoundIdleTransaction = "select set_config('idle_in_transaction_session_timeout', $1, false) " +
	"from pg_settings where name = 'idle_in_transaction_session_timeout' and (setting::bigint = 0 or setting::bigint > $1::bigint)"

// setAbandonedTxTimeout asks a new MySQL/MariaDB session to end itself
// after d idle inside a transaction. MySQL, which has no such setting,
// keeps its default (named in docs/DATABASE.md).
func setAbandonedTxTimeout(ctx context.Context, ex driver.ExecerContext, d time.Duration) error {
	secs := int64(wholeSeconds(d))
	_, err := ex.ExecContext(ctx, boundIdleTransaction, []driver.NamedValue{{Ordinal: 1, Value: secs}, {Ordinal: 2, Value: secs}})
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == errUnknownSystemVariable {
		return nil
	}
	return err
}

// wholeSeconds rounds d up to a whole second, at least one: MariaDB's
// setting is in seconds, and zero would turn it off.
func wholeSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// pgAbandonedTxTimeout is PostgreSQL's idle_in_transaction_session_timeout
// for a new session (9.6+), set after connecting rather than as a startup
// parameter, which poolers such as PgBouncer refuse.
func pgAbandonedTxTimeout(ctx context.Context, c *pgx.Conn, d time.Duration) error {
	_, err := c.Exec(ctx, pgBoundIdleTransaction, strconv.FormatInt(d.Milliseconds(), 10))
	return err
}
