package database

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// errNotClaimed is a write about a row that no claim returned.
var errNotClaimed = errors.New("dbqueue: the job has no reservation (pass a row returned by Claim or Extend)")

// token is the reservation a write about job is fenced by: its reserved_at
// as the claim set it or the last Extend refreshed it.
func token(job jobqueue.JobRow) (int64, error) {
	if job.ReservedAt == nil {
		return 0, errNotClaimed
	}
	return *job.ReservedAt, nil
}

// sameReservation reports whether a locked row still carries job's
// reservation; a job that was never reserved (a row its claim could not
// reserve, failed as it was selected) matches a row still unreserved.
func sameReservation(row, job jobqueue.JobRow) bool {
	if job.ReservedAt == nil || row.ReservedAt == nil {
		return job.ReservedAt == nil && row.ReservedAt == nil
	}
	return *row.ReservedAt == *job.ReservedAt
}

// takeReserved deletes job's row inside tx if it still carries the job's
// reservation (or, for a row its claim could not reserve, is still
// unreserved), else returns jobqueue.ErrReservationLost (the caller's transaction
// then rolls back: no released copy, no failed_jobs row, no next link, no
// batch counter is written for a job another worker holds). In exact mode
// it runs Laravel's deleteReserved statements (lock the row by id, delete
// it by id) and compares the token on the locked row in Go; otherwise one
// fenced delete.
func (q *Queue) takeReserved(ctx context.Context, tx *sql.Tx, job jobqueue.JobRow) error {
	if q.exact {
		rows, err := queryJobs(ctx, tx, q.st.FindForUpdate(), job.ID)
		if err != nil {
			return err
		}
		if len(rows) == 0 || !sameReservation(rows[0], job) {
			return jobqueue.ErrReservationLost
		}
		_, err = tx.ExecContext(ctx, q.st.DeleteJob(), job.ID)
		return err
	}
	var res sql.Result
	var err error
	if job.ReservedAt == nil {
		res, err = tx.ExecContext(ctx, q.st.DeleteUnreservedJob(), job.ID)
	} else {
		res, err = tx.ExecContext(ctx, q.st.DeleteReservedJob(), job.ID, *job.ReservedAt)
	}
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return cmp.Or(err, jobqueue.ErrReservationLost)
	}
	return nil
}

// Release is Laravel's deleteAndRelease, fenced: one transaction deletes
// the row and inserts a copy (new id) with the same payload bytes and
// attempts, reserved_at null, available_at = now + delay, created_at = now,
// on job.Queue. When the row no longer carries the job's reservation it
// writes nothing and returns jobqueue.ErrReservationLost (Laravel inserts the copy
// even then, and a job another worker already finished runs again).
func (q *Queue) Release(ctx context.Context, job jobqueue.JobRow, delay time.Duration) error {
	_, err := q.release(ctx, job, delay)
	return err
}

// release is Release, returning the new row's id.
func (q *Queue) release(ctx context.Context, job jobqueue.JobRow, delay time.Duration) (int64, error) {
	var newID int64
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		if err := q.takeReserved(ctx, tx, job); err != nil {
			return err
		}
		now := q.conn.UnixNow()
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

// Finish is a finished job's whole success, in one transaction: the row
// is deleted if it still carries the job's reservation (else
// jobqueue.ErrReservationLost and nothing is written), the chain's next link is
// pushed, the batch success recorded (Laravel's CallQueuedHandler does
// these as three separate writes) and the batch callbacks job that update
// triggers pushed onto the hooks queue (f.Hooks). A batch that no longer
// exists is skipped, as Laravel's `$this->batch()` is then null.
func (q *Queue) Finish(ctx context.Context, job jobqueue.JobRow, f jobqueue.Followup) error {
	if f.Hooks != nil && q.hooks == nil {
		return errNoHooksQueue
	}
	return q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		if err := q.takeReserved(ctx, tx, job); err != nil {
			return err
		}
		if f.Next != nil {
			now := q.conn.UnixNow()
			queue := q.queueNames([]string{f.Next.Queue})[0]
			if _, err := q.insertJob(ctx, tx, queue, f.Next.Payload, 0, now+delaySeconds(f.Next.Delay), now); err != nil {
				return err
			}
		}
		return q.batchAndHooksTx(ctx, tx, f, q.recordBatchSuccessTx)
	})
}

// batchAndHooksTx writes an outcome's batch update (record, when the job
// is in a batch) and its hook jobs, in the outcome's transaction. A batch
// pruned or deleted meanwhile has no counters to update, as Laravel's
// `$this->batch()` is then null.
func (q *Queue) batchAndHooksTx(ctx context.Context, tx *sql.Tx, f jobqueue.Followup,
	record func(ctx context.Context, tx *sql.Tx, batchID, jobUUID string) (jobqueue.BatchUpdate, error),
) error {
	var u *jobqueue.BatchUpdate
	batchID := ""
	if f.Batch != nil {
		batchID = f.Batch.ID
		up, err := record(ctx, tx, f.Batch.ID, f.Batch.JobUUID)
		switch {
		case err == nil:
			u = &up
		case !errors.Is(err, jobqueue.ErrBatchNotFound):
			return err
		}
	}
	return q.pushHooksTx(ctx, tx, f.Hooks, batchID, u)
}

// Extend refreshes the reservations of jobs still running (reserved_at =
// now), so no worker takes them after retry_after, and returns the jobs
// whose reservations held, with their new ReservedAt: the token of the
// next write about them. A job missing from the result lost its
// reservation (another worker reclaimed it) and was not touched. Each row
// is one fenced statement outside any transaction, so no lock is held
// between them. A job reserved this very second is returned as it is. On
// an error, the rows refreshed before it are returned with the error; the
// others are in an unknown state, not lost.
func (q *Queue) Extend(ctx context.Context, jobs []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	now := q.conn.UnixNow()
	refreshed := make([]jobqueue.JobRow, 0, len(jobs))
	for _, j := range jobs {
		tok, err := token(j)
		if err != nil {
			return refreshed, err
		}
		if tok >= now {
			refreshed = append(refreshed, j)
			continue
		}
		n, err := q.execCounting(ctx, q.st.ExtendReservation(), now, j.ID, tok)
		if err != nil {
			return refreshed, err
		}
		if n == 1 {
			at := now
			j.ReservedAt = &at
			refreshed = append(refreshed, j)
		}
	}
	return refreshed, nil
}

// Fail records a failed job under uuid and deletes it, in ONE
// transaction (Laravel does the delete and the failed_jobs insert
// separately), with its batch's failure (f.Batch; f.Next is ignored: a
// failed link ends its chain) and its hook job (f.Hooks: RunFailureHooks,
// naming the batch callbacks the batch update triggered). When the row no longer carries the job's
// reservation nothing is written and Fail returns jobqueue.ErrReservationLost.
// uuid is the payload's, or a fresh one for a payload that
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
func (q *Queue) Fail(ctx context.Context, job jobqueue.JobRow, uuid, exception string, f jobqueue.Followup) error {
	_, err := q.fail(ctx, job, uuid, exception, f)
	return err
}

// fail is Fail, returning the uuid stored.
func (q *Queue) fail(ctx context.Context, job jobqueue.JobRow, uuid, exception string, f jobqueue.Followup) (string, error) {
	if uuid == "" {
		return "", jobqueue.ErrNoUUID
	}
	if f.Hooks != nil && q.hooks == nil {
		return "", errNoHooksQueue
	}
	exception = utf8OrQuestionMarks(exception)
	var stored string
	var err error
	// A concurrent Fail of the same uuid can take the free uuid between our
	// check and insert; the unique index catches it and we pick again.
	for try := 0; ; try++ {
		stored, err = q.failOnce(ctx, job, uuid, exception, f)
		if err == nil || try >= 3 || !q.d.IsUniqueViolation(err) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	return stored, nil
}

func (q *Queue) failOnce(ctx context.Context, job jobqueue.JobRow, uuid, exception string, f jobqueue.Followup) (string, error) {
	var stored string
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		if err := q.takeReserved(ctx, tx, job); err != nil {
			return err
		}
		var err error
		if stored, err = q.insertFailedTx(ctx, tx, job.Queue, job.Payload, uuid, exception); err != nil {
			return err
		}
		return q.batchAndHooksTx(ctx, tx, jobqueue.Followup{Batch: f.Batch, Hooks: f.Hooks},
			func(ctx context.Context, tx *sql.Tx, batchID, jobUUID string) (jobqueue.BatchUpdate, error) {
				return q.recordBatchFailureTx(ctx, tx, batchID, jobUUID, f.Batch.AllowFailures)
			})
	})
	return stored, err
}

// insertFailedTx writes the failed_jobs row under uuid, or the first
// "<uuid>-<n>" free, and returns the uuid it used.
func (q *Queue) insertFailedTx(ctx context.Context, tx *sql.Tx, queue string, payload []byte, uuid, exception string) (string, error) {
	stored, err := q.freeFailedUUID(ctx, tx, uuid)
	if err != nil {
		return "", err
	}
	failedAt := q.now().In(q.loc).Format(time.DateTime)
	_, err = tx.ExecContext(ctx, q.st.InsertFailed(), stored, q.cfg.ConnectionName, queue, payloadArg(payload), exception, failedAt)
	return stored, err
}

// RecordFailed writes the failed_jobs row of a job that lives in another
// store (Laravel's Redis queue: the failed job provider's log(), which
// queue:work's JobFailed listener calls), under the connection name the
// queue was opened with. uuid and exception are taken as Fail takes them
// ("<uuid>-<n>" when the uuid is in failed_jobs already; invalid UTF-8
// replaced). It returns the uuid stored; with an error it still returns
// the uuid the last try meant to store, since a commit whose answer was
// lost may have stored it (look it up before writing the row again).
func (q *Queue) RecordFailed(ctx context.Context, queue string, payload []byte, uuid, exception string) (string, error) {
	if uuid == "" {
		return "", jobqueue.ErrNoUUID
	}
	exception = utf8OrQuestionMarks(exception)
	var stored string
	var err error
	for try := 0; ; try++ {
		err = q.inTx(ctx, func(tx *sql.Tx, _ int) error {
			var err error
			stored, err = q.insertFailedTx(ctx, tx, queue, payload, uuid, exception)
			return err
		})
		if err == nil || try >= 3 || !q.d.IsUniqueViolation(err) {
			return stored, err
		}
	}
}

// Unreserve gives a claimed job back as it was before the claim: attempts
// minus one and reserved_at null, so the claim leaves no trace (Go must
// leave some jobs to PHP workers). It changes nothing and returns
// jobqueue.ErrReservationLost if the row is gone or was reserved again since.
func (q *Queue) Unreserve(ctx context.Context, job jobqueue.JobRow) error {
	tok, err := token(job)
	if err != nil {
		return err
	}
	var n int64
	err = q.conn.Retrying(ctx, func(int) error {
		res, err := q.db.ExecContext(ctx, q.st.Unreserve(), max(job.Attempts-1, 0), job.ID, tok)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err == nil && n == 0 {
		return jobqueue.ErrReservationLost
	}
	// The row is claimable again, maybe below a claim's bound on ids.
	q.scan.forget()
	return err
}

// freeFailedUUID returns uuid, or the first "<uuid>-<n>" not yet in
// failed_jobs.
func (q *Queue) freeFailedUUID(ctx context.Context, tx *sql.Tx, uuid string) (string, error) {
	candidate := uuid
	for n := 2; ; n++ {
		var count int
		if err := tx.QueryRowContext(ctx, q.st.FailedUUIDExists(), candidate).Scan(&count); err != nil {
			return "", err
		}
		if count == 0 {
			return candidate, nil
		}
		if n > 1000 {
			return "", fmt.Errorf("dbqueue: too many failed_jobs rows for uuid %s", uuid)
		}
		candidate = uuid + "-" + strconv.Itoa(n)
	}
}
