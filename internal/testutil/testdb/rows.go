package testdb

import (
	"database/sql"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// JobRow is a jobs row as a user inspecting the table sees it.
type JobRow struct {
	ID          int64
	Queue       string
	Attempts    int64
	ReservedAt  sql.NullInt64
	AvailableAt int64
	CreatedAt   int64
	Payload     string
}

// JobRows reads the queue's jobs table in id order.
func JobRows(t testing.TB, q *database.Queue) []JobRow {
	t.Helper()
	var out []JobRow
	scanAll(t, q, fmt.Sprintf("select id, queue, attempts, reserved_at, available_at, created_at, payload from %s order by id", q.Config().JobsTable),
		func(rows *sql.Rows) error {
			var r JobRow
			err := rows.Scan(&r.ID, &r.Queue, &r.Attempts, &r.ReservedAt, &r.AvailableAt, &r.CreatedAt, &r.Payload)
			out = append(out, r)
			return err
		})
	return out
}

// FailedRow is a failed_jobs row.
type FailedRow struct {
	UUID, Connection, Queue, Payload, Exception, FailedAt string
}

// FailedRows reads the queue's failed_jobs table in id order.
func FailedRows(t testing.TB, q *database.Queue) []FailedRow {
	t.Helper()
	var out []FailedRow
	scanAll(t, q, fmt.Sprintf("select uuid, connection, queue, payload, exception, failed_at from %s order by id", q.Config().FailedTable),
		func(rows *sql.Rows) error {
			var r FailedRow
			var failedAt any
			err := rows.Scan(&r.UUID, &r.Connection, &r.Queue, &r.Payload, &r.Exception, &failedAt)
			r.FailedAt = fmt.Sprint(failedAt)
			out = append(out, r)
			return err
		})
	return out
}

func scanAll(t testing.TB, q *database.Queue, query string, scan func(*sql.Rows) error) {
	t.Helper()
	rows, err := q.DB().Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// InsertBatch adds a job_batches row of total jobs as PendingBatch::store
// writes it, with options (PHP-serialized; base64 on PostgreSQL, as
// Laravel stores them there).
func InsertBatch(t testing.TB, q *database.Queue, id string, total int, options []byte) {
	t.Helper()
	opts := string(options)
	if q.Dialect().Name() == appconfig.EnginePgSQL {
		opts = base64.StdEncoding.EncodeToString(options)
	}
	query := q.Dialect().Rebind(fmt.Sprintf("insert into %s (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, cancelled_at, created_at, finished_at) values (?, '', ?, ?, 0, '[]', ?, null, ?, null)",
		q.Dialect().Quote(q.Config().BatchesTable)))
	if _, err := q.DB().Exec(query, id, total, total, opts, time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
}
