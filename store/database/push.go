package database

import (
	"context"
	"database/sql"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/store/database/internal/sqlstmt"
)

func (q *Queue) insertJob(ctx context.Context, tx *sql.Tx, queue string, payload []byte, attempts int, availableAt, now int64) (int64, error) {
	args := []any{queue, attempts, nil, availableAt, now, payloadArg(payload)}
	if q.d.ReturningID() != "" {
		var id int64
		err := tx.QueryRowContext(ctx, q.st.InsertJobs(1), args...).Scan(&id)
		return id, err
	}
	res, err := tx.ExecContext(ctx, q.st.InsertJobs(1), args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// payloadArg binds payload bytes as text: binding []byte would store a
// BLOB in SQLite and fail on PostgreSQL text columns for some drivers.
func payloadArg(p []byte) any { return string(p) }

// Push inserts a raw payload like Queue::pushRaw / later(): attempts 0,
// reserved_at null, available_at now + delay, created_at now. It returns
// the new row's id (JobID.Num).
func (q *Queue) Push(ctx context.Context, item jobqueue.PushItem) (jobqueue.JobID, error) {
	id, err := q.push(ctx, item)
	return jobqueue.JobID{Num: id}, err
}

// push is Push, returning the row's id.
func (q *Queue) push(ctx context.Context, item jobqueue.PushItem) (int64, error) {
	var id int64
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		now := q.conn.UnixNow()
		var err error
		id, err = q.insertJob(ctx, tx, q.queueNames([]string{item.Queue})[0], item.Payload, 0, now+delaySeconds(item.Delay), now)
		return err
	})
	return id, err
}

// PushMany inserts all items in one transaction with multi-row inserts
// (Laravel's bulk() does one insert too).
func (q *Queue) PushMany(ctx context.Context, items []jobqueue.PushItem) error {
	if len(items) == 0 {
		return nil
	}
	const perStatement = 100 // 6 binds per row stays far below every limit
	return q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		now := q.conn.UnixNow()
		for start := 0; start < len(items); start += perStatement {
			end := min(start+perStatement, len(items))
			args := make([]any, 0, (end-start)*len(sqlstmt.JobInsertColumns))
			for _, it := range items[start:end] {
				args = append(args, q.queueNames([]string{it.Queue})[0], 0, nil, now+delaySeconds(it.Delay), now, payloadArg(it.Payload))
			}
			query := q.st.InsertJobs(end - start)
			if end-start == 1 && q.d.ReturningID() != "" {
				var id int64
				if err := tx.QueryRowContext(ctx, query, args...).Scan(&id); err != nil {
					return err
				}
				continue
			}
			if _, err := tx.ExecContext(ctx, query, args...); err != nil {
				return err
			}
		}
		return nil
	})
}
