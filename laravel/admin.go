package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// QueueSize counts the rows of one queue by state at the time of the call.
type QueueSize struct {
	Queue    string
	Ready    int64 // reserved_at null and available_at <= now
	Delayed  int64 // reserved_at null and available_at > now
	Reserved int64 // reserved, reservation younger than retry_after
	Expired  int64 // reserved longer than retry_after: claimable again
}

// Total is every row of the queue.
func (s QueueSize) Total() int64 { return s.Ready + s.Delayed + s.Reserved + s.Expired }

// Sizes returns the counts of every queue that has rows, by name.
func (q *Queue) Sizes(ctx context.Context) ([]QueueSize, error) {
	now := q.unixNow()
	expiry := now - int64(q.cfg.RetryAfter)
	rows, err := q.db.QueryContext(ctx, q.st.queueSizes(), now, now, expiry, expiry)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []QueueSize
	for rows.Next() {
		var s QueueSize
		var ready, delayed, reserved, expired any
		if err := rows.Scan(&s.Queue, &ready, &delayed, &reserved, &expired); err != nil {
			return nil, err
		}
		for _, p := range []struct {
			dst *int64
			v   any
		}{{&s.Ready, ready}, {&s.Delayed, delayed}, {&s.Reserved, reserved}, {&s.Expired, expired}} {
			n, err := toNumber(p.v)
			if err != nil {
				return nil, err
			}
			*p.dst = n
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// toNumber also accepts decimals (MySQL's SUM returns DECIMAL as text).
func toNumber(v any) (int64, error) {
	if b, ok := v.([]byte); ok {
		f, err := strconv.ParseFloat(string(b), 64)
		return int64(f), err
	}
	if s, ok := v.(string); ok {
		f, err := strconv.ParseFloat(s, 64)
		return int64(f), err
	}
	return toInt64(v)
}

// Clear is queue:clear: delete every row of the queue, reserved ones
// included. Returns the number deleted.
func (q *Queue) Clear(ctx context.Context, queue string) (int64, error) {
	res, err := q.db.ExecContext(ctx, q.st.clearQueue(), q.queueNames([]string{queue})[0])
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// FailedJob is one failed_jobs row.
type FailedJob struct {
	ID         int64
	UUID       string
	Connection string
	Queue      string
	Payload    []byte
	Exception  string
	FailedAt   string // 'Y-m-d H:i:s' as stored
	// Class is the payload's displayName ("" if the payload is unreadable).
	Class string
}

func scanFailed(rows interface{ Scan(...any) error }) (FailedJob, error) {
	var (
		f                      FailedJob
		id, payload, failedAt  any
		uuid, conn, queue, exc any
	)
	if err := rows.Scan(&id, &uuid, &conn, &queue, &payload, &exc, &failedAt); err != nil {
		return FailedJob{}, err
	}
	var err error
	if f.ID, err = toInt64(id); err != nil {
		return FailedJob{}, err
	}
	f.UUID, f.Connection, f.Queue = toString(uuid), toString(conn), toString(queue)
	f.Payload, f.Exception, f.FailedAt = toBytes(payload), toString(exc), toString(failedAt)
	if _, name, err := payloadMeta(f.Payload); err == nil {
		f.Class = name
	}
	return f, nil
}

// ListFailed returns failed jobs newest first (queue:failed), optionally
// only those of one queue.
func (q *Queue) ListFailed(ctx context.Context, queue string) ([]FailedJob, error) {
	var (
		rows *sql.Rows
		err  error
	)
	if queue == "" {
		rows, err = q.db.QueryContext(ctx, q.st.listFailed(false))
	} else {
		rows, err = q.db.QueryContext(ctx, q.st.listFailed(true), queue)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FailedJob
	for rows.Next() {
		f, err := scanFailed(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// ErrFailedJobNotFound is returned when no failed job matches.
var ErrFailedJobNotFound = errors.New("laravel: failed job not found")

// FindFailed looks a failed job up by uuid (what Laravel's database-uuids
// provider uses as the id) or, failing that, by numeric id.
func (q *Queue) FindFailed(ctx context.Context, idOrUUID string) (FailedJob, error) {
	f, err := scanFailed(q.db.QueryRowContext(ctx, q.st.findFailedBy("uuid"), idOrUUID))
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return FailedJob{}, err
	}
	if id, perr := strconv.ParseInt(idOrUUID, 10, 64); perr == nil {
		f, err = scanFailed(q.db.QueryRowContext(ctx, q.st.findFailedBy("id"), id))
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return FailedJob{}, err
		}
	}
	return FailedJob{}, fmt.Errorf("%w: %s", ErrFailedJobNotFound, idOrUUID)
}

// Forget deletes one failed job (queue:forget). It reports whether a row
// was deleted.
func (q *Queue) Forget(ctx context.Context, idOrUUID string) (bool, error) {
	f, err := q.FindFailed(ctx, idOrUUID)
	if errors.Is(err, ErrFailedJobNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	res, err := q.db.ExecContext(ctx, q.st.forgetFailed(), f.ID)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Flush deletes failed jobs (queue:flush); with olderThan > 0 only those
// with failed_at <= now - olderThan (Laravel 9+ --hours).
func (q *Queue) Flush(ctx context.Context, olderThan time.Duration) (int64, error) {
	var (
		res sql.Result
		err error
	)
	if olderThan > 0 {
		res, err = q.db.ExecContext(ctx, q.st.flushFailed(true), q.failedAtString(q.now().Add(-olderThan)))
	} else {
		res, err = q.db.ExecContext(ctx, q.st.flushFailed(false))
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// PruneFailed is queue:prune-failed: delete rows with failed_at < now -
// olderThan, 1000 per statement until none is left. Returns the total.
func (q *Queue) PruneFailed(ctx context.Context, olderThan time.Duration) (int64, error) {
	before := q.failedAtString(q.now().Add(-olderThan))
	var total int64
	for {
		res, err := q.db.ExecContext(ctx, q.st.pruneFailed(), before)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}

func (q *Queue) failedAtString(t time.Time) string { return t.In(q.loc).Format(time.DateTime) }

// RetryHook may rewrite a failed payload before it is pushed again (for
// instance to refresh retryUntil, which needs the PHP command). nil keeps
// the bytes unchanged.
type RetryHook func(payload []byte) ([]byte, error)

// RetryResult reports what happened to one failed job.
type RetryResult struct {
	Failed FailedJob
	NewID  int64 // id of the new jobs row, 0 on error
	Err    error
}

// Retry is queue:retry for the given ids/uuids: each failed job is pushed
// back (attempts 0, available_at now, same queue and payload/uuid) and then
// forgotten, in that order, each in its own transaction. Jobs of another
// queue connection than ours are reported as errors, not pushed.
func (q *Queue) Retry(ctx context.Context, ids []string, hook RetryHook) ([]RetryResult, error) {
	var out []RetryResult
	for _, id := range ids {
		f, err := q.FindFailed(ctx, id)
		if err != nil {
			if errors.Is(err, ErrFailedJobNotFound) {
				out = append(out, RetryResult{Failed: FailedJob{UUID: id}, Err: err})
				continue
			}
			return out, err
		}
		out = append(out, q.retryOne(ctx, f, hook))
	}
	return out, nil
}

// RetryAll is `queue:retry all`, or `queue:retry --queue=name` when queue
// is non-empty.
func (q *Queue) RetryAll(ctx context.Context, queue string, hook RetryHook) ([]RetryResult, error) {
	failed, err := q.ListFailed(ctx, queue)
	if err != nil {
		return nil, err
	}
	out := make([]RetryResult, 0, len(failed))
	for _, f := range failed {
		out = append(out, q.retryOne(ctx, f, hook))
	}
	return out, nil
}

func (q *Queue) retryOne(ctx context.Context, f FailedJob, hook RetryHook) RetryResult {
	r := RetryResult{Failed: f}
	if f.Connection != q.cfg.ConnectionName {
		r.Err = fmt.Errorf("laravel: failed job %s belongs to queue connection %q, not %q", f.UUID, f.Connection, q.cfg.ConnectionName)
		return r
	}
	payload := f.Payload
	if hook != nil {
		p, err := hook(payload)
		if err != nil {
			r.Err = fmt.Errorf("laravel: retry hook for %s: %w", f.UUID, err)
			return r
		}
		payload = p
	}
	id, err := q.Push(ctx, PushItem{Queue: f.Queue, Payload: payload})
	if err != nil {
		r.Err = err
		return r
	}
	r.NewID = id
	if _, err := q.db.ExecContext(ctx, q.st.forgetFailed(), f.ID); err != nil {
		r.Err = fmt.Errorf("laravel: pushed %s as job %d but could not forget it: %w", f.UUID, id, err)
	}
	return r
}
