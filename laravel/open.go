package laravel

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
// zero value is the default for every field, as in worker.Config.
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
	// ExactStatements makes Delete run Laravel's own deleteReserved
	// transaction for each job (`--laravel-exact`), instead of one grouped
	// delete, and Release, Fail and Finish lock the row with Laravel's
	// statement before they delete it.
	ExactStatements bool
	// SQLiteBusyTimeout is SQLite's busy_timeout; zero means 5s.
	SQLiteBusyTimeout time.Duration
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
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
	return o
}

// Open connects to the database described by cfg, detects the server
// version and returns a Queue. Errors never contain the password or DSN.
func Open(ctx context.Context, cfg Config, opts Options) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d, err := DialectFor(cfg.Driver)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	q := &Queue{
		cfg:        cfg,
		d:          d,
		db:         opts.DB,
		now:        opts.Clock,
		retry:      opts.Retry,
		loc:        cfg.Location(),
		sqliteBusy: opts.SQLiteBusyTimeout,
		exact:      opts.ExactStatements,
		ownDB:      opts.DB == nil,
	}
	if q.db == nil {
		db, err := openDB(cfg, q.sqliteBusy)
		if err != nil {
			return nil, err
		}
		q.db = db
		q.sessionReadCommitted = normalizeDriver(cfg.Driver) == EngineMySQL || normalizeDriver(cfg.Driver) == EngineMariaDB
	}
	if err := q.db.PingContext(ctx); err != nil {
		q.closeOwned()
		return nil, connectError(cfg, err)
	}
	if err := q.db.QueryRowContext(ctx, d.ServerVersionQuery()).Scan(&q.serverVersion); err != nil {
		q.closeOwned()
		return nil, connectError(cfg, err)
	}
	engine := d.Name()
	q.deleteReturning = engine != EngineMySQL || strings.Contains(q.serverVersion, "MariaDB")
	q.lock = LockForPopping(engine, q.serverVersion, cfg.ServerVersion)
	q.st = newStatements(d, Tables{Jobs: cfg.JobsTable, Failed: cfg.FailedTable, Batches: cfg.BatchesTable}, q.lock)
	return q, nil
}

func (q *Queue) closeOwned() {
	if q.ownDB && q.db != nil {
		q.db.Close()
	}
}

// connectError describes where we tried to connect without the DSN and
// with any secret scrubbed from the driver's message.
func connectError(cfg Config, err error) error {
	where := cfg.Driver + " " + cfg.Database
	if cfg.Driver != EngineSQLite {
		where = fmt.Sprintf("%s %s@%s/%s", cfg.Driver, cfg.Username, hostPort(cfg), cfg.Database)
	}
	// The whole message is scrubbed: a secret may equal any part of it.
	return scrubError(fmt.Errorf("laravel: connecting to %s: %w", where, err), cfg.Password, cfg.AppKey)
}

func hostPort(cfg Config) string {
	if cfg.Socket != "" {
		return "unix(" + cfg.Socket + ")"
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
}

// openDB builds a connector per driver. MySQL and PostgreSQL use structured
// configs (no DSN string holding the password is ever built).
func openDB(cfg Config, busy time.Duration) (*sql.DB, error) {
	switch cfg.Driver {
	case EngineMySQL, EngineMariaDB:
		c, err := mysql.NewConnector(mysqlConfig(cfg))
		if err != nil {
			return nil, connectError(cfg, err)
		}
		return sql.OpenDB(readCommittedConnector{c}), nil
	case EnginePgSQL:
		// The conninfo carries no password; it is set on the parsed config
		// afterwards (fallbacks share it).
		pc, err := pgx.ParseConfig(pgConnInfo(cfg))
		if err != nil {
			return nil, connectError(cfg, err)
		}
		pc.Password = cfg.Password.Reveal()
		return stdlib.OpenDB(*pc), nil
	case EngineSQLite:
		db, err := sql.Open("sqlite", sqliteDSN(cfg.Database, busy))
		if err != nil {
			return nil, connectError(cfg, err)
		}
		return db, nil
	}
	return nil, fmt.Errorf("laravel: unsupported driver %q", cfg.Driver)
}

func pgConnInfo(cfg Config) string {
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

func mysqlConfig(cfg Config) *mysql.Config {
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
