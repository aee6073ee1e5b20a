package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Delete removes finished jobs. With WithExactStatements each job is
// deleted in Laravel's own deleteReserved transaction; otherwise all of
// them go in one `delete ... where id in (...)` (same end state, a
// fraction of the round trips).
func (q *Queue) Delete(ctx context.Context, jobs []JobRow) error {
	if q.exact {
		for _, j := range jobs {
			if _, err := q.deleteReserved(ctx, j.ID); err != nil {
				return err
			}
		}
		return nil
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	_, err := q.deleteMany(ctx, ids)
	return err
}

// deleteReserved is Laravel's deleteReserved: in one transaction, lock the
// row (`select ... for update`) and delete it if it still exists. It
// reports whether a row was deleted.
func (q *Queue) deleteReserved(ctx context.Context, id int64) (bool, error) {
	var deleted bool
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		deleted = false
		jobs, err := queryJobs(ctx, tx, q.st.findForUpdate(), id)
		if err != nil || len(jobs) == 0 {
			return err
		}
		res, err := tx.ExecContext(ctx, q.st.deleteJob(), id)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		deleted = n > 0
		return nil
	})
	return deleted, err
}

// deleteMany removes jobs by id in one transaction and returns how many
// rows went away.
func (q *Queue) deleteMany(ctx context.Context, ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	chunks := chunkIDs(ids)
	if len(chunks) == 1 && q.singleStatementSafe() {
		// One statement is atomic on its own: no transaction round trips.
		var n int64
		err := q.retrying(ctx, func(int) error {
			res, err := q.db.ExecContext(ctx, q.st.deleteJobs(len(ids)), int64sToArgs(ids)...)
			if err != nil {
				return err
			}
			n, _ = res.RowsAffected()
			return nil
		})
		return n, err
	}
	var total int64
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) (err error) {
		total, err = execChunks(ctx, tx, chunks, q.st.deleteJobs)
		return err
	})
	return total, err
}

// execChunks runs stmt(len(chunk)), a statement of the catalogue, once per
// chunk of ids, binding the leading arguments before the ids, and adds up
// the rows affected.
func execChunks(ctx context.Context, tx *sql.Tx, chunks [][]int64, stmt func(n int) string, leading ...any) (int64, error) {
	var total int64
	for _, chunk := range chunks {
		query := stmt(len(chunk))
		args := append(append([]any(nil), leading...), int64sToArgs(chunk)...)
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return 0, err
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}

// Release is Laravel's deleteAndRelease: one transaction deletes the row
// and inserts a copy (new id) with the same payload bytes and attempts,
// reserved_at null, available_at = now + delay, created_at = now, on
// job.Queue. The insert happens even when the row is already gone, as in
// Laravel.
func (q *Queue) Release(ctx context.Context, job JobRow, delay time.Duration) error {
	_, err := q.release(ctx, job, delay)
	return err
}

// release is Release, returning the new row's id.
func (q *Queue) release(ctx context.Context, job JobRow, delay time.Duration) (int64, error) {
	var newID int64
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		if _, err := tx.ExecContext(ctx, q.st.deleteJob(), job.ID); err != nil {
			return err
		}
		now := q.unixNow()
		id, err := q.insertJob(ctx, tx, job.Queue, job.Payload, job.Attempts, now+delaySeconds(delay), now)
		newID = id
		return err
	})
	return newID, err
}

// delaySeconds rounds a delay down to whole seconds; negative is zero.
func delaySeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(d / time.Second)
}

// Extend sets reserved_at = now for jobs that are still reserved, so a
// long-running job is not handed to another worker after retry_after.
func (q *Queue) Extend(ctx context.Context, jobs []JobRow) error {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	_, err := q.extend(ctx, ids)
	return err
}

// extend is Extend by ids, returning the number of rows touched.
func (q *Queue) extend(ctx context.Context, ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var total int64
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) (err error) {
		total, err = execChunks(ctx, tx, chunkIDs(ids), q.st.extendReservation, q.unixNow())
		return err
	})
	return total, err
}

// ErrNoUUID means a payload has no uuid, which the database-uuids failed
// job provider requires (Laravel raises an ErrorException).
var ErrNoUUID = errors.New("laravel: payload has no uuid")

// Fail records a failed job under uuid and deletes it, in ONE
// transaction (Laravel does the delete and the failed_jobs insert
// separately). uuid is the payload's, or a fresh one for a payload that
// has none or cannot be parsed: such a row must still be recorded, not
// lost. exception is the text for failed_jobs.exception; invalid UTF-8 is
// replaced by '?' as Laravel 9.2+ does. failed_at is now in APP_TIMEZONE
// as 'Y-m-d H:i:s'.
//
// If failed_jobs already holds the uuid (e.g. a job retried with
// queue:retry failed again before the command forgot the old row), the
// new row gets the uuid "<uuid>-<n>" (n = 2, 3, ...) instead of failing:
// the job is still deleted and both failure records survive. Laravel would
// error here and lose the record.
func (q *Queue) Fail(ctx context.Context, job JobRow, uuid, exception string) error {
	_, err := q.fail(ctx, job, uuid, exception)
	return err
}

// fail is Fail, returning the uuid stored.
func (q *Queue) fail(ctx context.Context, job JobRow, uuid, exception string) (string, error) {
	if uuid == "" {
		return "", ErrNoUUID
	}
	exception = utf8OrQuestionMarks(exception)
	var stored string
	var err error
	// A concurrent Fail of the same uuid can take the free uuid between our
	// check and insert; the unique index catches it and we pick again.
	for try := 0; ; try++ {
		stored, err = q.failOnce(ctx, job, uuid, exception)
		if err == nil || try >= 3 || !q.d.IsUniqueViolation(err) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	return stored, nil
}

func (q *Queue) failOnce(ctx context.Context, job JobRow, uuid, exception string) (string, error) {
	var stored string
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		if _, err := tx.ExecContext(ctx, q.st.deleteJob(), job.ID); err != nil {
			return err
		}
		var err error
		stored, err = q.freeFailedUUID(ctx, tx, uuid)
		if err != nil {
			return err
		}
		failedAt := q.now().In(q.loc).Format(time.DateTime)
		_, err = tx.ExecContext(ctx, q.st.insertFailed(), stored, q.cfg.ConnectionName, job.Queue, payloadArg(job.Payload), exception, failedAt)
		return err
	})
	return stored, err
}

// Unreserve gives a claimed job back as it was before the claim: attempts
// minus one and reserved_at null, so the claim leaves no trace (Go must
// leave some jobs to PHP workers). It changes nothing if the row is gone or
// was reserved again since.
func (q *Queue) Unreserve(ctx context.Context, job JobRow) error {
	_, err := q.unreserve(ctx, job)
	return err
}

// unreserve is Unreserve, reporting whether the row was restored.
func (q *Queue) unreserve(ctx context.Context, job JobRow) (bool, error) {
	if job.ReservedAt == nil {
		return false, errors.New("laravel: Unreserve needs a job returned by a claim")
	}
	var n int64
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		res, err := tx.ExecContext(ctx, q.st.unreserve(), max(job.Attempts-1, 0), job.ID, *job.ReservedAt)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n == 1, err
}

// freeFailedUUID returns uuid, or the first "<uuid>-<n>" not yet in
// failed_jobs.
func (q *Queue) freeFailedUUID(ctx context.Context, tx *sql.Tx, uuid string) (string, error) {
	candidate := uuid
	for n := 2; ; n++ {
		var count int
		if err := tx.QueryRowContext(ctx, q.st.failedUUIDExists(), candidate).Scan(&count); err != nil {
			return "", err
		}
		if count == 0 {
			return candidate, nil
		}
		if n > 1000 {
			return "", fmt.Errorf("laravel: too many failed_jobs rows for uuid %s", uuid)
		}
		candidate = uuid + "-" + strconv.Itoa(n)
	}
}
