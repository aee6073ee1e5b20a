package database

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/jobqueue"
)

// This file is what the CLI and the dashboard read of single jobs and of
// batches beside the worker's operations (jobqueue.Admin's FindJob,
// jobqueue.Batches).

// FindJob reads the jobs row id (reserved or not).
func (q *Queue) FindJob(ctx context.Context, id int64) (jobqueue.JobRow, error) {
	jobs, err := queryJobs(ctx, q.db, q.st.FindJob(), id)
	if err != nil {
		return jobqueue.JobRow{}, err
	}
	if len(jobs) == 0 {
		return jobqueue.JobRow{}, fmt.Errorf("%w: no job %d in %s", jobqueue.ErrJobNotFound, id, q.cfg.JobsTable)
	}
	return jobs[0], nil
}

// uuidCandidates bounds the rows FindJobByUUID reads whose payload holds
// the uuid's text somewhere (a job's data may quote another job's uuid).
const uuidCandidates = 20

// FindJobByUUID reads the jobs row whose payload's uuid is uuid. The jobs
// table has no uuid column: the rows are found by a LIKE on the payload,
// which reads the whole table.
func (q *Queue) FindJobByUUID(ctx context.Context, uuid string) (jobqueue.JobRow, error) {
	if !plainUUID(uuid) {
		return jobqueue.JobRow{}, fmt.Errorf("%w: %q is not a uuid (letters, digits and dashes)", jobqueue.ErrJobNotFound, uuid)
	}
	jobs, err := queryJobs(ctx, q.db, q.st.FindJobByUUID(uuidCandidates), `%"uuid":"`+uuid+`"%`)
	if err != nil {
		return jobqueue.JobRow{}, err
	}
	for _, j := range jobs {
		if got, _, err := payloadMeta(j.Payload); err == nil && got == uuid {
			return j, nil
		}
	}
	return jobqueue.JobRow{}, fmt.Errorf("%w: no job with uuid %s in %s", jobqueue.ErrJobNotFound, uuid, q.cfg.JobsTable)
}

// plainUUID accepts what a uuid is made of, so the LIKE pattern needs no
// escaping.
func plainUUID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return r != '-' && (r < '0' || r > '9') && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z')
	}) < 0
}

// ListBatches is DatabaseBatchRepository::get($limit, $before): batches
// by id, highest first, below before when it is set.
func (q *Queue) ListBatches(ctx context.Context, before string, limit int) ([]jobqueue.Batch, error) {
	if limit <= 0 {
		return nil, nil
	}
	var args []any
	if before != "" {
		args = append(args, before)
	}
	rows, err := q.db.QueryContext(ctx, q.st.ListBatches(before != "", limit), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []jobqueue.Batch
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		b, err := q.batchFromColumns(cols, vals)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// CancelBatch is Batch::cancel() (DatabaseBatchRepository::cancel):
// cancelled_at and finished_at set to now, whatever the batch's state.
func (q *Queue) CancelBatch(ctx context.Context, id string) error {
	return q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		if _, err := q.scanBatch(ctx, func(s string, a ...any) (*sql.Rows, error) { return tx.QueryContext(ctx, s, a...) }, true, id); err != nil {
			return err
		}
		now := q.conn.UnixNow()
		_, err := tx.ExecContext(ctx, q.st.CancelBatch(), now, now, id)
		return err
	})
}
