package database

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/cache/dbcache"
	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database/internal/sqlstmt"
)

// Queue runs Laravel's database-queue protocol against one database: it
// implements jobqueue.Store and its capabilities, and the admin side
// (jobqueue.Admin, jobqueue.FailedJobs). It is safe for concurrent use.
type Queue struct {
	conn *sqldb.DB
	// db and d are conn's pool and dialect, used on every statement.
	db  *sql.DB
	d   sqldb.Dialect
	cfg appconfig.Config
	// retryAfter is retry_after in effect, in seconds (an app's 0
	// included): read by every claim.
	retryAfter int64
	st         sqlstmt.Statements
	// lock is the claim's lock clause (Laravel's getLockForPopping).
	lock string
	loc  *time.Location
	// exact runs Laravel's own statements for every delete
	// (Options.ExactStatements).
	exact bool
	// deleteReturning: the server has DELETE ... RETURNING (MariaDB,
	// PostgreSQL, SQLite; not MySQL), which the grouped fenced delete uses
	// to learn which rows it deleted.
	deleteReturning bool
	// indexed: the claim index is there (DetectClaimPath) and claims use
	// it.
	indexed atomic.Bool
	// oneStatementClaims: batched claims with Laravel's query are one
	// UPDATE ... RETURNING (the engine has it); tests and benchmarks
	// unset it to run the select-and-reserve transaction instead.
	oneStatementClaims bool
	// singleStatementSafe is conn.SingleStatementSafe(), which each delete
	// asks.
	singleStatementSafe bool
	// pgArrays is st.PgArrays(), which each claim asks: the engine binds
	// a list as one array parameter (PostgreSQL).
	pgArrays bool
	// deleteOneText is st.DeleteReservedJob(), the statement of most
	// jobs' delete (deleteOne), rendered at open rather than by the first
	// job.
	deleteOneText string
	// scan is the lower bound on ids of Laravel's claim and the claim
	// cost report (claimscan.go).
	scan scanBounds
	// defaultQueues is the default queue alone, the queues a claim of
	// none or of "" names (queueNames).
	defaultQueues []string
	// lastFilter is the class filter of the last claim, rendered
	// (claimfilter.go).
	lastFilter atomic.Pointer[renderedFilter]
	// idle are the queues whose last transactional claim found nothing:
	// the next one looks first (peek.go).
	idle idleQueues
	// cache and locks are the app's database cache store, when it is its
	// default store (nil otherwise), and its locks.
	cache *dbcache.Cache
	locks *dbcache.Locks
	// shared are the app's stores beyond the database's (Options.Shared).
	shared SharedStores
	// hooks is the hooks queue (Options.HooksQueue), hookSt the
	// statements on its table; hooks is nil without one.
	hooks  *HooksQueue
	hookSt sqlstmt.Statements

	// testHookAfterSelect runs inside the claim transaction after the
	// SELECT, with the 1-based transaction attempt. Tests use it to provoke
	// real deadlocks.
	testHookAfterSelect func(ctx context.Context, tx sqldb.TxConn, attempt int) error
	// testHookPeek is told what each look before a claim found (peek.go).
	testHookPeek func(found bool)
}

// RetryAfter is the connection's retry_after: how long a reservation
// holds before any worker may take the job again.
func (q *Queue) RetryAfter() time.Duration { return time.Duration(q.retryAfter) * time.Second }

// Connection is the queue connection's name (failed_jobs.connection).
func (q *Queue) Connection() string { return q.cfg.ConnectionName }

// DefaultQueue is the connection's default queue, which a claim of ""
// serves.
func (q *Queue) DefaultQueue() string { return q.cfg.DefaultQueue }

// TraceDestination names a queue in the worker's spans as PHP's
// OpenTelemetry instrumentation would, if it named it: it calls every
// queue of the database driver "(anonymous)", so that every job of every
// queue would be "process (anonymous)". The queue's name says which queue
// it was; messaging.system is left out, as PHP leaves it.
func (q *Queue) TraceDestination(queue string) (system, name string) { return "", queue }

// DB exposes the underlying pool.
func (q *Queue) DB() *sql.DB { return q.db }

// Ping checks that the database answers.
func (q *Queue) Ping(ctx context.Context) error { return q.db.PingContext(ctx) }

// SQL is the connection the queue runs on: pool, dialect and
// transactions.
func (q *Queue) SQL() *sqldb.DB { return q.conn }

// Dialect returns the engine dialect.
func (q *Queue) Dialect() sqldb.Dialect { return q.d }

// Config returns the configuration the queue was opened with.
func (q *Queue) Config() appconfig.Config { return q.cfg }

// ServerVersion is the version string the server reported.
func (q *Queue) ServerVersion() string { return q.conn.ServerVersion }

// LockClause is the lock appended to the claim query (Laravel's
// getLockForPopping for this server).
func (q *Queue) LockClause() string { return q.lock }

// Close closes the pool if Open created it.
func (q *Queue) Close() error { return q.conn.Close() }

// Classify sorts an error returned by this package.
func (q *Queue) Classify(err error) sqldb.ErrorClass { return q.conn.Classify(err) }

// IsLostConnection reports whether a worker should stop because the
// connection is gone (Laravel's DetectsLostConnections).
func (q *Queue) IsLostConnection(err error) bool { return q.conn.IsLostConnection(err) }

func (q *Queue) now() time.Time { return q.conn.Now() }

// inTx runs fn in a transaction, retried as sqldb.DB.InTx retries.
func (q *Queue) inTx(ctx context.Context, fn func(tx *sql.Tx, attempt int) error) error {
	return q.conn.InTx(ctx, fn)
}

func (q *Queue) txOptions() *sql.TxOptions { return q.conn.TxOptions() }

// queryer is *sql.DB, *sql.Tx, *sql.Conn or a packed transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryJobs runs a select * on the jobs table and scans rows by column
// name, so extra or reordered columns in a user's table do not matter.
func queryJobs(ctx context.Context, db queryer, query string, args ...any) ([]jobqueue.JobRow, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var jobs []jobqueue.JobRow
	// Scan replaces every value each row, so one set of holders serves all.
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		j, err := jobFromColumns(cols, vals)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
}

func jobFromColumns(cols []string, vals []any) (jobqueue.JobRow, error) {
	var j jobqueue.JobRow
	for i, c := range cols {
		v := vals[i]
		var err error
		switch c {
		case "id":
			j.ID, err = sqldb.ToInt64(v)
		case "queue":
			j.Queue = sqldb.ToString(v)
		case "payload":
			j.Payload = sqldb.ScannedBytes(v)
		case "attempts":
			var n int64
			n, err = sqldb.ToInt64(v)
			j.Attempts = int(n)
		case "reserved_at":
			if v != nil {
				var n int64
				n, err = sqldb.ToInt64(v)
				j.ReservedAt = &n
			}
		case "available_at":
			j.AvailableAt, err = sqldb.ToInt64(v)
		case "created_at":
			j.CreatedAt, err = sqldb.ToInt64(v)
		}
		if err != nil {
			return jobqueue.JobRow{}, fmt.Errorf("dbqueue: jobs.%s: %w", c, err)
		}
	}
	return j, nil
}

func int64sToArgs(ids []int64) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}

// maxInList bounds "where id in (...)" lists so no engine's parameter limit
// is reached; longer lists are split into several statements in one
// transaction.
const maxInList = 500

func chunkIDs(ids []int64) [][]int64 { return chunkIDsBy(ids, maxInList) }

// chunkIDsBy splits ids into chunks of at most limit.
func chunkIDsBy(ids []int64, limit int) [][]int64 {
	var out [][]int64
	for len(ids) > limit {
		out = append(out, ids[:limit])
		ids = ids[limit:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}
