package laravel

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// Queue runs Laravel's database-queue protocol against one database.
// It is safe for concurrent use.
type Queue struct {
	db            *sql.DB
	ownDB         bool
	d             Dialect
	cfg           Config
	st            statements
	lock          string
	serverVersion string
	now           func() time.Time
	loc           *time.Location
	retry         RetryPolicy
	sqliteBusy    time.Duration
	// exact runs Laravel's own statements for every delete
	// (Options.ExactStatements).
	exact bool
	// sessionReadCommitted: Open's own MySQL pool sets the isolation level
	// per connection (readCommittedConnector).
	sessionReadCommitted bool
	// deleteReturning: the server has DELETE ... RETURNING (MariaDB,
	// PostgreSQL, SQLite; not MySQL), which the grouped fenced delete uses
	// to learn which rows it deleted.
	deleteReturning bool
	// indexed: the claim index is there (DetectClaimPath) and claims use
	// it.
	indexed atomic.Bool
	// txClaims: batched claims run the select-and-reserve transaction
	// even where one statement would do (benchmarks compare the two).
	txClaims bool

	// testHookAfterSelect runs inside the claim transaction after the
	// SELECT, with the 1-based transaction attempt. Tests use it to provoke
	// real deadlocks.
	testHookAfterSelect func(ctx context.Context, tx *sql.Tx, attempt int) error
}

// JobRow is one row of the jobs table.
type JobRow struct {
	ID          int64
	Queue       string // the row's queue column
	Payload     []byte // raw bytes, never re-encoded
	Attempts    int
	ReservedAt  *int64
	AvailableAt int64
	CreatedAt   int64
}

// RetryAfter is the connection's retry_after: how long a reservation
// holds before any worker may take the job again.
func (q *Queue) RetryAfter() time.Duration { return time.Duration(q.cfg.RetryAfter) * time.Second }

// Connection is the queue connection's name (failed_jobs.connection).
func (q *Queue) Connection() string { return q.cfg.ConnectionName }

// DB exposes the underlying pool.
func (q *Queue) DB() *sql.DB { return q.db }

// Dialect returns the engine dialect.
func (q *Queue) Dialect() Dialect { return q.d }

// Config returns the configuration the queue was opened with.
func (q *Queue) Config() Config { return q.cfg }

// ServerVersion is the version string the server reported.
func (q *Queue) ServerVersion() string { return q.serverVersion }

// LockClause is the lock appended to the claim query (Laravel's
// getLockForPopping for this server).
func (q *Queue) LockClause() string { return q.lock }

// Close closes the pool if Open created it.
func (q *Queue) Close() error {
	if q.ownDB {
		return q.db.Close()
	}
	return nil
}

// Classify sorts an error returned by this package.
func (q *Queue) Classify(err error) ErrorClass { return classify(q.d, err) }

// IsLostConnection reports whether a worker should stop because the
// connection is gone (Laravel's DetectsLostConnections).
func (q *Queue) IsLostConnection(err error) bool { return q.Classify(err) == ErrLostConnection }

func (q *Queue) unixNow() int64 { return q.now().Unix() }

// inTx runs fn in a transaction, re-running the whole transaction on a
// retryable error with jittered exponential backoff. fn must be
// idempotent per attempt: everything it did is rolled back before a retry.
func (q *Queue) inTx(ctx context.Context, fn func(tx *sql.Tx, attempt int) error) error {
	return q.retrying(ctx, func(attempt int) error { return q.tryTx(ctx, fn, attempt) })
}

// waitBackoff sleeps before the next try, or returns ctx's error.
func (q *Queue) waitBackoff(ctx context.Context, attempt int) error {
	t := time.NewTimer(q.retry.backoff(attempt))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (q *Queue) tryTx(ctx context.Context, fn func(tx *sql.Tx, attempt int) error, attempt int) error {
	tx, err := q.db.BeginTx(ctx, q.txOptions())
	if err != nil {
		return err
	}
	if err := fn(tx, attempt); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// queryer is *sql.DB, *sql.Tx or *sql.Conn.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryJobs runs a select * on the jobs table and scans rows by column
// name, so extra or reordered columns in a user's table do not matter.
func queryJobs(ctx context.Context, db queryer, query string, args ...any) ([]JobRow, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var jobs []JobRow
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

func jobFromColumns(cols []string, vals []any) (JobRow, error) {
	var j JobRow
	for i, c := range cols {
		v := vals[i]
		var err error
		switch c {
		case "id":
			j.ID, err = toInt64(v)
		case "queue":
			j.Queue = toString(v)
		case "payload":
			j.Payload = scannedBytes(v)
		case "attempts":
			var n int64
			n, err = toInt64(v)
			j.Attempts = int(n)
		case "reserved_at":
			if v != nil {
				var n int64
				n, err = toInt64(v)
				j.ReservedAt = &n
			}
		case "available_at":
			j.AvailableAt, err = toInt64(v)
		case "created_at":
			j.CreatedAt, err = toInt64(v)
		}
		if err != nil {
			return JobRow{}, fmt.Errorf("laravel: jobs.%s: %w", c, err)
		}
	}
	return j, nil
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int:
		return int64(x), nil
	case uint64:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case []byte:
		return strconv.ParseInt(string(x), 10, 64)
	case string:
		return strconv.ParseInt(x, 10, 64)
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("unexpected type %T", v)
}

func toNullInt64(v any) (*int64, error) {
	if v == nil {
		return nil, nil
	}
	n, err := toInt64(v)
	return &n, err
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		// timestamp columns without zone: the wall clock is what was stored.
		return x.Format(time.DateTime)
	}
	return fmt.Sprint(v)
}

// scannedBytes is toBytes for a value Scan stored in an *any: database/sql
// already copied the driver's bytes there, so they are not copied again.
func scannedBytes(v any) []byte {
	if b, ok := v.([]byte); ok {
		return b
	}
	return toBytes(v)
}

func toBytes(v any) []byte {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return append([]byte(nil), x...)
	case string:
		return []byte(x)
	}
	return []byte(fmt.Sprint(v))
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
