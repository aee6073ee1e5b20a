package database

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/internal/phpjson"
	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

func (q *Queue) scanBatch(ctx context.Context, query func(string, ...any) (*sql.Rows, error), forUpdate bool, id string) (jobqueue.Batch, error) {
	rows, err := query(q.st.FindBatch(forUpdate), id)
	if err != nil {
		return jobqueue.Batch{}, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return jobqueue.Batch{}, err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return jobqueue.Batch{}, err
		}
		return jobqueue.Batch{}, fmt.Errorf("%w: %s", jobqueue.ErrBatchNotFound, id)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return jobqueue.Batch{}, err
	}
	return q.batchFromColumns(cols, vals)
}

func (q *Queue) batchFromColumns(cols []string, vals []any) (jobqueue.Batch, error) {
	var b jobqueue.Batch
	for i, c := range cols {
		v := vals[i]
		var err error
		switch c {
		case "id":
			b.ID = sqldb.ToString(v)
		case "name":
			b.Name = sqldb.ToString(v)
		case "total_jobs":
			b.TotalJobs, err = sqldb.ToInt64(v)
		case "pending_jobs":
			b.PendingJobs, err = sqldb.ToInt64(v)
		case "failed_jobs":
			b.FailedJobs, err = sqldb.ToInt64(v)
		case "failed_job_ids":
			b.FailedJobIDs, err = decodePHPList(sqldb.ToBytes(v))
		case "options":
			b.Options = q.decodeBatchOptions(sqldb.ToBytes(v))
		case "cancelled_at":
			b.CancelledAt, err = sqldb.ToNullInt64(v)
		case "created_at":
			b.CreatedAt, err = sqldb.ToInt64(v)
		case "finished_at":
			b.FinishedAt, err = sqldb.ToNullInt64(v)
		}
		if err != nil {
			return jobqueue.Batch{}, fmt.Errorf("dbqueue: job_batches.%s: %w", c, err)
		}
	}
	return b, nil
}

// decodeBatchOptions undoes the base64 Laravel applies on PostgreSQL.
func (q *Queue) decodeBatchOptions(raw []byte) []byte {
	if raw == nil || q.d.Name() != appconfig.EnginePgSQL || strings.ContainsAny(string(raw), ":;") {
		return raw
	}
	dec, err := base64.StdEncoding.DecodeString(string(raw))
	if err != nil {
		return raw
	}
	return dec
}

// FindBatch reads a batch.
func (q *Queue) FindBatch(ctx context.Context, id string) (jobqueue.Batch, error) {
	return q.scanBatch(ctx, func(s string, a ...any) (*sql.Rows, error) { return q.db.QueryContext(ctx, s, a...) }, false, id)
}

// BatchCancelled reports whether a batch has been cancelled; unknown
// batches count as not cancelled (Laravel's Batchable::batch() is null).
func (q *Queue) BatchCancelled(ctx context.Context, id string) (bool, error) {
	b, err := q.FindBatch(ctx, id)
	if errors.Is(err, jobqueue.ErrBatchNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return b.Cancelled(), nil
}

// RecordBatchSuccess is jobqueue.Batch::recordSuccessfulJob's database part:
// pending_jobs - 1 and jobUUID removed from failed_job_ids, atomically
// (select ... for update + update), and finished_at = now once pending
// reaches 0 — in the same transaction (Laravel uses a second statement).
// Callbacks (then/finally/progress) are PHP closures and are not run.
// (Finish does the same in a finished job's own transaction.)
func (q *Queue) RecordBatchSuccess(ctx context.Context, batchID, jobUUID string) (jobqueue.BatchCounts, error) {
	var u jobqueue.BatchUpdate
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) (err error) {
		u, err = q.recordBatchSuccessTx(ctx, tx, batchID, jobUUID)
		return err
	})
	return u.Counts, err
}

// RecordBatchFailure is jobqueue.Batch::recordFailedJob's database part:
// failed_jobs + 1 and jobUUID appended (deduplicated); when this is the
// first failure and the batch does not allow failures, the batch is
// cancelled (cancelled_at = finished_at = now). allowFailures comes from
// the PHP-serialized options, which the caller decodes. (Fail does the
// same in a failed job's own transaction.)
func (q *Queue) RecordBatchFailure(ctx context.Context, batchID, jobUUID string, allowFailures bool) (jobqueue.BatchCounts, error) {
	var u jobqueue.BatchUpdate
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) (err error) {
		u, err = q.recordBatchFailureTx(ctx, tx, batchID, jobUUID, allowFailures)
		return err
	})
	return u.Counts, err
}

func (q *Queue) recordBatchSuccessTx(ctx context.Context, tx *sql.Tx, batchID, jobUUID string) (jobqueue.BatchUpdate, error) {
	return q.updateBatch(ctx, tx, batchID, func(b jobqueue.Batch) (jobqueue.BatchCounts, []string, bool) {
		ids := make([]string, 0, len(b.FailedJobIDs))
		for _, id := range b.FailedJobIDs {
			if id != jobUUID {
				ids = append(ids, id)
			}
		}
		c := jobqueue.BatchCounts{PendingJobs: b.PendingJobs - 1, FailedJobs: b.FailedJobs}
		return c, ids, c.PendingJobs == 0
	}, func(jobqueue.BatchCounts) error { return nil })
}

func (q *Queue) recordBatchFailureTx(ctx context.Context, tx *sql.Tx, batchID, jobUUID string, allowFailures bool) (jobqueue.BatchUpdate, error) {
	return q.updateBatch(ctx, tx, batchID, func(b jobqueue.Batch) (jobqueue.BatchCounts, []string, bool) {
		ids := append([]string(nil), b.FailedJobIDs...)
		seen := false
		for _, id := range ids {
			seen = seen || id == jobUUID
		}
		if !seen {
			ids = append(ids, jobUUID)
		}
		ids = uniqueStrings(ids)
		return jobqueue.BatchCounts{PendingJobs: b.PendingJobs, FailedJobs: b.FailedJobs + 1}, ids, false
	}, func(c jobqueue.BatchCounts) error {
		if c.FailedJobs != 1 || allowFailures {
			return nil
		}
		now := q.conn.UnixNow()
		_, err := tx.ExecContext(ctx, q.st.CancelBatch(), now, now, batchID)
		return err
	})
}

// uniqueStrings is array_values(array_unique(...)): first occurrence wins.
func uniqueStrings(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// updateBatch locks the batch row in tx, writes the counters compute
// returns (and finished_at when it says so), then runs after. It returns
// the batch as it was locked and the counters written.
func (q *Queue) updateBatch(ctx context.Context, tx *sql.Tx, batchID string,
	compute func(jobqueue.Batch) (jobqueue.BatchCounts, []string, bool),
	after func(jobqueue.BatchCounts) error,
) (jobqueue.BatchUpdate, error) {
	b, err := q.scanBatch(ctx, func(s string, a ...any) (*sql.Rows, error) { return tx.QueryContext(ctx, s, a...) }, true, batchID)
	if err != nil {
		return jobqueue.BatchUpdate{}, err
	}
	c, ids, finished := compute(b)
	failedIDs, err := phpjson.StringList(ids, 0)
	if err != nil {
		return jobqueue.BatchUpdate{}, fmt.Errorf("dbqueue: batch %s failed_job_ids: %w", batchID, err)
	}
	if _, err := tx.ExecContext(ctx, q.st.UpdateBatchCounts(), c.PendingJobs, c.FailedJobs, failedIDs, batchID); err != nil {
		return jobqueue.BatchUpdate{}, err
	}
	if finished {
		if _, err := tx.ExecContext(ctx, q.st.FinishBatch(), q.conn.UnixNow(), batchID); err != nil {
			return jobqueue.BatchUpdate{}, err
		}
	}
	return jobqueue.BatchUpdate{Before: b, Counts: c}, after(c)
}
