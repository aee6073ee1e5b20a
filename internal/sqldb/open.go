package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/laraworker/laraworker/laravel/appconfig"
	_ "modernc.org/sqlite" // registers "sqlite"
)

// RetryPolicy bounds the automatic re-run of a transaction that failed
// with a retryable error (deadlock, lock wait timeout, serialization
// failure, SQLite busy).
type RetryPolicy struct {
	MaxAttempts int           // total tries, >= 1
	BaseDelay   time.Duration // first backoff
	MaxDelay    time.Duration // cap per backoff
}

// DefaultRetryPolicy retries up to 10 times, 5ms doubling to at most 1s,
// with jitter.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 10, BaseDelay: 5 * time.Millisecond, MaxDelay: time.Second}

// backoff returns a jittered exponential delay for the given (1-based)
// failed attempt: uniformly in [d/2, d] where d = min(base*2^(n-1), max).
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	if d > p.MaxDelay {
		d = p.MaxDelay
	}
	if d <= 0 {
		return 0
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// Options are Open's settings beyond the app's connection config. The
// zero value is the default for every field.
type Options struct {
	// DB, when set, is used instead of opening a connection pool from the
	// config (which still gives the driver, tables and queue settings).
	// Close then leaves it open: it belongs to the caller.
	DB *sql.DB
	// Clock replaces time.Now (tests).
	Clock func() time.Time
	// Retry bounds the re-run of transactions that failed with a
	// retryable error; zero means DefaultRetryPolicy. MaxAttempts below 1
	// counts as 1.
	Retry RetryPolicy
	// SQLiteBusyTimeout is SQLite's busy_timeout; zero means 5s.
	SQLiteBusyTimeout time.Duration
	// Setup names the setup problems of the errors returned (see
	// SetupErrors).
	Setup SetupErrors
	// AbandonedTxTimeout ends a session of the pool Open makes (MariaDB,
	// PostgreSQL) idle inside a transaction that long; zero means
	// DefaultAbandonedTxTimeout.
	AbandonedTxTimeout time.Duration
}

// WithDefaults fills the zero fields.
func (o Options) WithDefaults() Options {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Retry == (RetryPolicy{}) {
		o.Retry = DefaultRetryPolicy
	}
	if o.Retry.MaxAttempts < 1 {
		o.Retry.MaxAttempts = 1
	}
	if o.SQLiteBusyTimeout <= 0 {
		o.SQLiteBusyTimeout = 5 * time.Second
	}
	if o.AbandonedTxTimeout <= 0 {
		o.AbandonedTxTimeout = DefaultAbandonedTxTimeout
	}
	return o
}

// DB is a connection pool on the app's database with the engine's dialect:
// transactions are retried on deadlocks, lock waits and serialization
// failures, and errors are classified as Laravel's detectors do.
type DB struct {
	// Pool is the database/sql pool.
	Pool *sql.DB
	// Dialect is the engine's SQL and error handling.
	Dialect Dialect
	// ServerVersion is the version string the server reported.
	ServerVersion string
	// Now is the clock (Options.Clock).
	Now   func() time.Time
	retry RetryPolicy
	ownDB bool
	// sessionReadCommitted: Open's own MySQL pool sets the isolation level
	// per connection (sessionConnector).
	sessionReadCommitted bool
	// multiStatements: Open's own MySQL pool allows several statements
	// per query (packed transactions, packed.go).
	multiStatements bool
	// setup is Options.Setup.
	setup SetupErrors
}

// Open connects to the database described by cfg (its unset fields at
// Laravel's defaults, appconfig.Config.WithDefaults) and detects the
// server version. Errors never contain the password or DSN.
func Open(ctx context.Context, cfg appconfig.Config, opts Options) (*DB, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d, err := DialectFor(cfg.Driver)
	if err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()
	db := &DB{Pool: opts.DB, Dialect: d, Now: opts.Clock, retry: opts.Retry, ownDB: opts.DB == nil, setup: opts.Setup}
	if db.Pool == nil {
		pool, err := openDB(cfg, opts)
		if err != nil {
			return nil, err
		}
		db.Pool = pool
		db.sessionReadCommitted = d.Name() == appconfig.EngineMySQL
		db.multiStatements = d.Name() == appconfig.EngineMySQL
	}
	if err := db.Pool.PingContext(ctx); err != nil {
		db.Close()
		return nil, connectError(cfg, err)
	}
	if err := db.Pool.QueryRowContext(ctx, d.ServerVersionQuery()).Scan(&db.ServerVersion); err != nil {
		db.Close()
		return nil, connectError(cfg, err)
	}
	return db, nil
}

// Close closes the pool if Open created it (a pool given in Options.DB
// belongs to the caller).
func (db *DB) Close() error {
	if db.ownDB && db.Pool != nil {
		return db.Pool.Close()
	}
	return nil
}

// UnixNow is the clock's time in unix seconds.
func (db *DB) UnixNow() int64 { return db.Now().Unix() }

// Classify sorts an error returned by the driver.
func (db *DB) Classify(err error) ErrorClass { return classify(db.Dialect, err) }

// IsLostConnection reports whether a worker should stop because the
// connection is gone (Laravel's DetectsLostConnections).
func (db *DB) IsLostConnection(err error) bool { return db.Classify(err) == ErrLostConnection }

// connectError describes where we tried to connect without the DSN and
// with any secret scrubbed from the driver's message.
func connectError(cfg appconfig.Config, err error) error {
	where := cfg.Driver + " " + cfg.Database
	if cfg.Driver != appconfig.EngineSQLite {
		where = fmt.Sprintf("%s %s@%s/%s", cfg.Driver, cfg.Username, hostPort(cfg), cfg.Database)
	}
	// The whole message is scrubbed: a secret may equal any part of it.
	return appconfig.ScrubError(fmt.Errorf("sqldb: connecting to %s: %w", where, err), cfg.Password, cfg.AppKey)
}

func hostPort(cfg appconfig.Config) string {
	if cfg.Socket != "" {
		return "unix(" + cfg.Socket + ")"
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
}

// openDB builds a connector per driver. MySQL and PostgreSQL use structured
// configs (no DSN string holding the password is ever built).
func openDB(cfg appconfig.Config, opts Options) (*sql.DB, error) {
	switch cfg.Driver {
	case appconfig.EngineMySQL, appconfig.EngineMariaDB:
		c, err := mysql.NewConnector(mysqlConfig(cfg))
		if err != nil {
			return nil, connectError(cfg, err)
		}
		return sql.OpenDB(sessionConnector{c, opts.AbandonedTxTimeout}), nil
	case appconfig.EnginePgSQL:
		// The conninfo carries no password; it is set on the parsed config
		// afterwards (fallbacks share it).
		pc, err := pgx.ParseConfig(pgConnInfo(cfg))
		if err != nil {
			return nil, connectError(cfg, err)
		}
		pc.Password = cfg.Password.Reveal()
		return stdlib.OpenDB(*pc, stdlib.OptionAfterConnect(pgSession(cfg.JobsTable, opts.AbandonedTxTimeout))), nil
	case appconfig.EngineSQLite:
		db, err := sql.Open("sqlite", sqliteDSN(cfg.Database, opts.SQLiteBusyTimeout))
		if err != nil {
			return nil, connectError(cfg, err)
		}
		return db, nil
	}
	return nil, fmt.Errorf("sqldb: unsupported driver %q", cfg.Driver)
}

func pgConnInfo(cfg appconfig.Config) string {
	host := cfg.Host
	if cfg.Socket != "" {
		host = cfg.Socket
	}
	kv := func(k, v string) string {
		return k + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
	}
	return strings.Join([]string{
		kv("host", host), kv("port", strconv.Itoa(cfg.Port)), kv("dbname", cfg.Database), kv("user", cfg.Username),
	}, " ")
}

func mysqlConfig(cfg appconfig.Config) *mysql.Config {
	mc := mysql.NewConfig()
	mc.User = cfg.Username
	mc.Passwd = cfg.Password.Reveal()
	mc.DBName = cfg.Database
	if cfg.Socket != "" {
		mc.Net, mc.Addr = "unix", cfg.Socket
	} else {
		mc.Net, mc.Addr = "tcp", hostPort(cfg)
	}
	// Laravel's MySqlConnector sets "names utf8mb4 collate
	// utf8mb4_unicode_ci"; match it so `queue = ?` compares the same way.
	mc.Collation = "utf8mb4_unicode_ci"
	mc.ParseTime = false
	// Bindings are interpolated client-side, as PDO's default emulated
	// prepares do for Laravel: one round trip per statement instead of
	// prepare, execute and close. The driver escapes for the session's
	// NO_BACKSLASH_ESCAPES and refuses charsets where that is unsafe
	// (utf8mb4 is safe).
	mc.InterpolateParams = true
	// Several statements per query, as PDO's MySQL driver allows by
	// default: a claim sends START TRANSACTION with its select and COMMIT
	// with its update (packed.go). Every statement text comes from the
	// statement catalogue and values are bindings escaped by the driver,
	// so no value can add a statement.
	mc.MultiStatements = true
	// The driver prints "[mysql] ... unexpected EOF" lines to stderr on its
	// own; the queue reports those errors itself, in the worker's log format.
	mc.Logger = quietMySQLLogger{}
	return mc
}

type quietMySQLLogger struct{}

func (quietMySQLLogger) Print(...any) {}

// sqliteDSN: WAL so readers never block the writer, busy_timeout so
// writers wait instead of failing, and BEGIN IMMEDIATE for every
// transaction so a claim takes the write lock before it reads (a deferred
// transaction that reads then writes can fail with SQLITE_BUSY at the
// upgrade, which busy_timeout cannot help).
func sqliteDSN(path string, busy time.Duration) string {
	v := url.Values{}
	v.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	v.Add("_pragma", "journal_mode(WAL)")
	v.Add("_pragma", "foreign_keys(1)")
	v.Set("_txlock", "immediate")
	if path == ":memory:" {
		return "file::memory:?" + v.Encode()
	}
	return "file:" + strings.ReplaceAll(path, "?", "%3f") + "?" + v.Encode()
}
