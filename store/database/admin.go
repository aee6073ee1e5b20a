package database

import (
	"context"
	"strconv"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
)

// Sizes returns the counts of every queue that has rows, by name.
func (q *Queue) Sizes(ctx context.Context) ([]jobqueue.QueueSize, error) {
	now := q.conn.UnixNow()
	expiry := now - q.retryAfter
	rows, err := q.db.QueryContext(ctx, q.st.QueueSizes(), now, now, expiry, expiry)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []jobqueue.QueueSize
	for rows.Next() {
		var s jobqueue.QueueSize
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
	return sqldb.ToInt64(v)
}

// Clear is queue:clear: delete every row of the queue, reserved ones
// included. Returns the number deleted.
func (q *Queue) Clear(ctx context.Context, queue string) (int64, error) {
	res, err := q.db.ExecContext(ctx, q.st.ClearQueue(), q.queueNames([]string{queue})[0])
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
