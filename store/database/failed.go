package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
)

func scanFailed(rows interface{ Scan(...any) error }) (jobqueue.FailedJob, error) {
	var (
		f                      jobqueue.FailedJob
		id, payload, failedAt  any
		uuid, conn, queue, exc any
	)
	if err := rows.Scan(&id, &uuid, &conn, &queue, &payload, &exc, &failedAt); err != nil {
		return jobqueue.FailedJob{}, err
	}
	var err error
	if f.ID, err = sqldb.ToInt64(id); err != nil {
		return jobqueue.FailedJob{}, err
	}
	f.UUID, f.Connection, f.Queue = sqldb.ToString(uuid), sqldb.ToString(conn), sqldb.ToString(queue)
	f.Payload, f.Exception, f.FailedAt = sqldb.ToBytes(payload), sqldb.ToString(exc), sqldb.ToString(failedAt)
	if _, name, err := payloadMeta(f.Payload); err == nil {
		f.Class = name
	}
	return f, nil
}

// ListFailed returns failed jobs newest first (queue:failed), optionally
// only those of one queue.
func (q *Queue) ListFailed(ctx context.Context, queue string) ([]jobqueue.FailedJob, error) {
	var (
		rows *sql.Rows
		err  error
	)
	if queue == "" {
		rows, err = q.db.QueryContext(ctx, q.st.ListFailed(false))
	} else {
		rows, err = q.db.QueryContext(ctx, q.st.ListFailed(true), queue)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []jobqueue.FailedJob
	for rows.Next() {
		f, err := scanFailed(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FindFailed looks a failed job up by uuid (what Laravel's database-uuids
// provider uses as the id) or, failing that, by numeric id.
func (q *Queue) FindFailed(ctx context.Context, idOrUUID string) (jobqueue.FailedJob, error) {
	f, err := scanFailed(q.db.QueryRowContext(ctx, q.st.FindFailedBy("uuid"), idOrUUID))
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return jobqueue.FailedJob{}, err
	}
	if id, perr := strconv.ParseInt(idOrUUID, 10, 64); perr == nil {
		f, err = scanFailed(q.db.QueryRowContext(ctx, q.st.FindFailedBy("id"), id))
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return jobqueue.FailedJob{}, err
		}
	}
	return jobqueue.FailedJob{}, fmt.Errorf("%w: %s", jobqueue.ErrFailedJobNotFound, idOrUUID)
}

// Forget deletes one failed job (queue:forget). It reports whether a row
// was deleted.
func (q *Queue) Forget(ctx context.Context, idOrUUID string) (bool, error) {
	f, err := q.FindFailed(ctx, idOrUUID)
	if errors.Is(err, jobqueue.ErrFailedJobNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	res, err := q.db.ExecContext(ctx, q.st.ForgetFailed(), f.ID)
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
		res, err = q.db.ExecContext(ctx, q.st.FlushFailed(true), q.failedAtString(q.now().Add(-olderThan)))
	} else {
		res, err = q.db.ExecContext(ctx, q.st.FlushFailed(false))
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
		res, err := q.db.ExecContext(ctx, q.st.PruneFailed(), before)
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

// Retry is queue:retry for the given ids/uuids: each failed job is pushed
// back (attempts 0, available_at now, same queue and payload/uuid) and then
// forgotten, in that order, each in its own transaction. Jobs of another
// queue connection than ours are reported as errors, not pushed.
func (q *Queue) Retry(ctx context.Context, ids []string, hook jobqueue.RetryHook) ([]jobqueue.RetryResult, error) {
	return q.RetryTo(ctx, ids, hook, q.pushFailed)
}

// pushFailed is Retry's pusher: a jobs row on this database.
func (q *Queue) pushFailed(ctx context.Context, f jobqueue.FailedJob, payload []byte) (int64, error) {
	return q.push(ctx, jobqueue.PushItem{Queue: f.Queue, Payload: payload})
}

// RetryTo is Retry with the failed jobs pushed by push: a store whose
// jobs live elsewhere (Laravel's Redis queue) keeps its failed jobs here.
func (q *Queue) RetryTo(ctx context.Context, ids []string, hook jobqueue.RetryHook, push jobqueue.RetryPusher) ([]jobqueue.RetryResult, error) {
	var out []jobqueue.RetryResult
	for _, id := range ids {
		f, err := q.FindFailed(ctx, id)
		if err != nil {
			if errors.Is(err, jobqueue.ErrFailedJobNotFound) {
				out = append(out, jobqueue.RetryResult{Failed: jobqueue.FailedJob{UUID: id}, Err: err})
				continue
			}
			return out, err
		}
		out = append(out, q.retryOne(ctx, f, hook, push))
	}
	return out, nil
}

// RetryAll is `queue:retry all`, or `queue:retry --queue=name` when queue
// is non-empty.
func (q *Queue) RetryAll(ctx context.Context, queue string, hook jobqueue.RetryHook) ([]jobqueue.RetryResult, error) {
	return q.RetryAllTo(ctx, queue, hook, q.pushFailed)
}

// RetryAllTo is RetryAll with the failed jobs pushed by push.
func (q *Queue) RetryAllTo(ctx context.Context, queue string, hook jobqueue.RetryHook, push jobqueue.RetryPusher) ([]jobqueue.RetryResult, error) {
	failed, err := q.ListFailed(ctx, queue)
	if err != nil {
		return nil, err
	}
	out := make([]jobqueue.RetryResult, 0, len(failed))
	for _, f := range failed {
		out = append(out, q.retryOne(ctx, f, hook, push))
	}
	return out, nil
}

func (q *Queue) retryOne(ctx context.Context, f jobqueue.FailedJob, hook jobqueue.RetryHook, push jobqueue.RetryPusher) jobqueue.RetryResult {
	r := jobqueue.RetryResult{Failed: f}
	if f.Connection != q.cfg.ConnectionName {
		r.Err = fmt.Errorf("dbqueue: failed job %s belongs to queue connection %q, not %q", f.UUID, f.Connection, q.cfg.ConnectionName)
		return r
	}
	payload := f.Payload
	if hook != nil {
		p, err := hook(payload)
		if err != nil {
			r.Err = fmt.Errorf("dbqueue: retry hook for %s: %w", f.UUID, err)
			return r
		}
		payload = p
	}
	id, err := push(ctx, f, payload)
	if err != nil {
		r.Err = err
		return r
	}
	r.NewID = id
	if _, err := q.db.ExecContext(ctx, q.st.ForgetFailed(), f.ID); err != nil {
		r.Err = fmt.Errorf("dbqueue: pushed %s again but could not forget it: %w", f.UUID, err)
	}
	return r
}
