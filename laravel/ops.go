package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// DeleteReserved is Laravel's deleteReserved: in one transaction, lock the
// row (`select ... for update`) and delete it if it still exists. It
// reports whether a row was deleted.
func (q *Queue) DeleteReserved(ctx context.Context, id int64) (bool, error) {
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

// Delete removes one job with a single `delete ... where id = ?` (same end
// state as DeleteReserved, one round trip less).
func (q *Queue) Delete(ctx context.Context, id int64) (bool, error) {
	n, err := q.DeleteMany(ctx, []int64{id})
	return n > 0, err
}

// DeleteMany removes jobs by id in one transaction and returns how many
// rows went away.
func (q *Queue) DeleteMany(ctx context.Context, ids []int64) (int64, error) {
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
// Laravel. It returns the new row's id.
func (q *Queue) Release(ctx context.Context, job JobRow, delay time.Duration) (int64, error) {
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

func (q *Queue) insertJob(ctx context.Context, tx *sql.Tx, queue string, payload []byte, attempts int, availableAt, now int64) (int64, error) {
	args := []any{queue, attempts, nil, availableAt, now, payloadArg(payload)}
	if q.d.ReturningID() != "" {
		var id int64
		err := tx.QueryRowContext(ctx, q.st.insertJobs(1), args...).Scan(&id)
		return id, err
	}
	res, err := tx.ExecContext(ctx, q.st.insertJobs(1), args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// payloadArg binds payload bytes as text: binding []byte would store a
// BLOB in SQLite and fail on PostgreSQL text columns for some drivers.
func payloadArg(p []byte) any { return string(p) }

// PushItem is one job to push.
type PushItem struct {
	Queue   string // empty: the default queue
	Payload []byte
	Delay   time.Duration
}

// Push inserts a raw payload like Queue::pushRaw / later(): attempts 0,
// reserved_at null, available_at now + delay, created_at now. It returns
// the new id.
func (q *Queue) Push(ctx context.Context, item PushItem) (int64, error) {
	var id int64
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		now := q.unixNow()
		var err error
		id, err = q.insertJob(ctx, tx, q.queueNames([]string{item.Queue})[0], item.Payload, 0, now+delaySeconds(item.Delay), now)
		return err
	})
	return id, err
}

// PushMany inserts all items in one transaction with multi-row inserts
// (Laravel's bulk() does one insert too).
func (q *Queue) PushMany(ctx context.Context, items []PushItem) error {
	if len(items) == 0 {
		return nil
	}
	const perStatement = 100 // 6 binds per row stays far below every limit
	return q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		now := q.unixNow()
		for start := 0; start < len(items); start += perStatement {
			end := min(start+perStatement, len(items))
			args := make([]any, 0, (end-start)*len(jobInsertColumns))
			for _, it := range items[start:end] {
				args = append(args, q.queueNames([]string{it.Queue})[0], 0, nil, now+delaySeconds(it.Delay), now, payloadArg(it.Payload))
			}
			query := q.st.insertJobs(end - start)
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

// ExtendReservation sets reserved_at = now for jobs that are still
// reserved, so a long-running job is not handed to another worker after
// retry_after. Returns the number of rows touched.
func (q *Queue) ExtendReservation(ctx context.Context, ids ...int64) (int64, error) {
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

// Fail records a failed job and deletes it, in ONE transaction (Laravel
// does the delete and the failed_jobs insert separately). exception is
// the text for failed_jobs.exception; invalid UTF-8 is replaced by '?' as
// Laravel 9.2+ does. failed_at is now in APP_TIMEZONE as 'Y-m-d H:i:s'.
//
// If failed_jobs already holds the payload's uuid (e.g. a job retried with
// queue:retry failed again before the command forgot the old row), the
// new row gets the uuid "<uuid>-<n>" (n = 2, 3, ...) instead of failing:
// the job is still deleted and both failure records survive. Laravel would
// error here and lose the record. The returned string is the uuid stored.
func (q *Queue) Fail(ctx context.Context, job JobRow, exception string) (string, error) {
	uuid, _, err := payloadMeta(job.Payload)
	if err != nil {
		return "", err
	}
	if uuid == "" {
		return "", ErrNoUUID
	}
	return q.FailAs(ctx, job, uuid, exception)
}

// FailAs is Fail with the failed_jobs uuid given by the caller, for rows
// whose payload has none or cannot be parsed: they must still be recorded,
// not lost.
func (q *Queue) FailAs(ctx context.Context, job JobRow, uuid, exception string) (string, error) {
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
// was reserved again since. It reports whether the row was restored.
func (q *Queue) Unreserve(ctx context.Context, job JobRow) (bool, error) {
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
