package worker

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when any goroutine outlives them: a
// worker that stopped must leave nothing running (claim loop, lease
// refresher, completer, handler goroutines, timers). pgx's own close of a
// connection whose query was cancelled is not the worker's: it drains the
// connection in a goroutine of its own, bounded by pgx's deadline
// (pgconn.asyncClose), and outlived the last test once in CI.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgconn.(*PgConn).asyncClose.func1"))
}
