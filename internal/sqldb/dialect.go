package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// ErrorClass says how the queue should react to a database error.
type ErrorClass int

const (
	// ErrOther is any error that retrying will not fix.
	ErrOther ErrorClass = iota
	// ErrRetryable: deadlock, lock wait timeout, serialization failure,
	// SQLite busy/locked. The transaction was rolled back by the server;
	// running it again from the start is safe.
	ErrRetryable
	// ErrLostConnection: the connection is gone. Whether a COMMIT took
	// effect is unknown, so this is never retried automatically; a worker
	// should stop like Laravel's does (exit 0, "lost_connection").
	ErrLostConnection
)

func (c ErrorClass) String() string {
	switch c {
	case ErrRetryable:
		return "retryable"
	case ErrLostConnection:
		return "lost_connection"
	}
	return "other"
}

// Dialect holds every engine-specific piece of SQL and error handling, so
// the queue operations are written once.
type Dialect interface {
	// Name is the Laravel driver name: mysql, pgsql or sqlite.
	Name() string
	// Quote quotes a (possibly schema-qualified, already validated)
	// identifier.
	Quote(ident string) string
	// Rebind turns '?' placeholders into the engine's form.
	Rebind(query string) string
	// ForUpdate is Laravel's lockForUpdate() rendering ("" on SQLite).
	ForUpdate() string
	// ReturningID is appended to an INSERT whose new id is wanted; "" when
	// the driver's LastInsertId works.
	ReturningID() string
	// TxOptions are used for every transaction the queue opens.
	TxOptions() *sql.TxOptions
	// DeleteLimited deletes at most n rows of table matching where (which
	// uses '?' placeholders).
	DeleteLimited(table, where string, n int) string
	// CreateTables returns the DDL for Laravel's three queue tables.
	CreateTables(t Tables) []string
	// Classify sorts an error into retryable / lost connection / other.
	Classify(err error) ErrorClass
	// IsUniqueViolation reports a unique index violation.
	IsUniqueViolation(err error) bool
	// IsOutOfRange reports a value too large for its column (attempts past
	// tinyint unsigned's 255): the row itself is at fault, not the database.
	IsOutOfRange(err error) bool
	// ServerVersionQuery returns the server's version string, the value
	// PDO::ATTR_SERVER_VERSION reports.
	ServerVersionQuery() string
}

// Tables names the three Laravel tables.
type Tables struct {
	Jobs, Failed, Batches string
	// Shape is the app's Laravel version's migration stubs, which
	// CreateTables follows; the zero value is 8.x-13.5's.
	Shape TableShape
}

// TableShape says where a Laravel version's queue table stubs differ from
// 8.x-13.5's (Illuminate/Queue/Console/stubs).
type TableShape struct {
	// SmallAttempts: jobs.attempts is unsignedSmallInteger (13.6+) instead
	// of unsignedTinyInteger, whose 255 a job released often overflows.
	SmallAttempts bool
	// IndexedFailed: failed_jobs.connection and .queue are string
	// (varchar(255)) instead of text, with an index on (connection, queue,
	// failed_at) (13.9+).
	IndexedFailed bool
}

// ShapeFor is the table shape of Laravel version's stubs; "" (unknown) is
// 8.x-12.x's, which every app's first migration had before 13.6.
func ShapeFor(version string) TableShape {
	if version == "" {
		return TableShape{}
	}
	return TableShape{
		SmallAttempts: appconfig.VersionCompare(version, "13.6") >= 0,
		IndexedFailed: appconfig.VersionCompare(version, "13.9") >= 0,
	}
}

// failedIndexColumns are the columns of 13.9's failed_jobs index.
const failedIndexColumns = "connection_queue_failed_at"

// DefaultTables are Laravel's default table names.
var DefaultTables = Tables{Jobs: "jobs", Failed: "failed_jobs", Batches: "job_batches"}

// DialectFor returns the dialect for a Laravel driver name.
func DialectFor(driver string) (Dialect, error) {
	switch appconfig.NormalizeDriver(driver) {
	case appconfig.EngineMySQL, appconfig.EngineMariaDB:
		return mysqlDialect{}, nil
	case appconfig.EnginePgSQL:
		return pgsqlDialect{}, nil
	case appconfig.EngineSQLite:
		return sqliteDialect{}, nil
	}
	return nil, errors.New("sqldb: unsupported driver " + strconv.Quote(driver))
}

// quoteWith quotes each dot-separated part of an identifier.
func quoteWith(ident string, q byte) string {
	parts := strings.Split(ident, ".")
	for i, p := range parts {
		qs := string(q)
		parts[i] = qs + strings.ReplaceAll(p, qs, qs+qs) + qs
	}
	return strings.Join(parts, ".")
}

// IndexName follows Laravel's Blueprint::createIndexName: lower-cased
// "<table>_<columns>_<type>" with "-" and "." replaced by "_".
func IndexName(table, column, kind string) string {
	return strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToLower(table + "_" + column + "_" + kind))
}

// LastPart is the table name without its schema.
func LastPart(ident string) string {
	if i := strings.LastIndexByte(ident, '.'); i >= 0 {
		return ident[i+1:]
	}
	return ident
}

// messageClass implements Laravel's message-based detection
// (DetectsConcurrencyErrors, DetectsLostConnections) as a fallback for
// errors that carry no structured code.
func messageClass(err error) ErrorClass {
	msg := err.Error()
	for _, s := range concurrencyMessages {
		if strings.Contains(msg, s) {
			return ErrRetryable
		}
	}
	for _, s := range lostConnectionMessages {
		if strings.Contains(msg, s) {
			return ErrLostConnection
		}
	}
	return ErrOther
}

var concurrencyMessages = []string{
	"Deadlock found when trying to get lock",
	"deadlock detected",
	"The database file is locked",
	"database is locked",
	"database table is locked",
	"A table in the database is locked",
	"has been chosen as the deadlock victim",
	"Lock wait timeout exceeded; try restarting transaction",
	"WSREP detected deadlock/conflict and aborted the transaction. Try restarting the transaction",
	"Record has changed since last read in table",
}

var lostConnectionMessages = []string{
	"server has gone away",
	"Server has gone away",
	"no connection to the server",
	"Lost connection",
	"is dead or not enabled",
	"Error while sending",
	"decryption failed or bad record mac",
	"server closed the connection unexpectedly",
	"SSL connection has been closed unexpectedly",
	"Error writing data to the connection",
	"Resource deadlock avoided",
	"Transaction() on null",
	"child connection forced to terminate due to client_idle_limit",
	"query_wait_timeout",
	"reset by peer",
	"Physical connection is not usable",
	"TCP Provider: Error code 0x68",
	"ORA-03114",
	"Packets out of order. Expected",
	"Adaptive Server connection failed",
	"Communication link failure",
	"connection is no longer usable",
	"Login timeout expired",
	"SQLSTATE[HY000] [2002] Connection refused",
	"running with the --read-only option so it cannot execute this statement",
	"The connection is broken and recovery is not possible",
	"SQLSTATE[HY000] [2002] php_network_getaddresses: getaddrinfo failed",
	"Connection timed out",
	"SSL: Connection timed out",
	"SQLSTATE[HY000]: General error: 7 SSL SYSCALL error: EOF detected",
	"Temporary failure in name resolution",
	"connection refused",
	"broken pipe",
	"bad connection",
	"invalid connection",
	"unexpected EOF",
	"conn closed",
}

// commonLostConnection catches the Go-level signs of a dead connection
// that every driver shares.
func commonLostConnection(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr)
}

// Classify applies d.Classify, but context cancellation is never retried
// or reported as a lost connection.
func classify(d Dialect, err error) ErrorClass {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ErrOther
	}
	return d.Classify(err)
}
