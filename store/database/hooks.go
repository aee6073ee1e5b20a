package database

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database/internal/sqlstmt"
)

// The bridge's hook jobs (jobqueue.Followup.Hooks) are rows of the hooks
// queue's table, inserted in the transaction of the outcome they follow:
// a crash before its commit leaves neither, after it both, so a hook is
// never lost and never pushed twice.

// errNoHooksQueue refuses a Followup with hooks on a queue opened without
// a hooks queue.
var errNoHooksQueue = errors.New("dbqueue: the outcome has hook jobs but the queue was opened without a hooks queue (Options.HooksQueue)")

// setHooksQueue checks h and keeps it, with the statements on its table.
func (q *Queue) setHooksQueue(h *HooksQueue) error {
	if h == nil {
		return nil
	}
	if h.Queue == "" {
		return errors.New("dbqueue: the hooks queue needs a queue name")
	}
	table := h.Table
	if table == "" {
		table = q.cfg.JobsTable
	}
	if err := appconfig.ValidateTableName(table); err != nil {
		return fmt.Errorf("dbqueue: the hooks queue's table: %w", err)
	}
	hooks := *h
	hooks.Table = table
	q.hooks = &hooks
	q.hookSt = sqlstmt.New(q.d, sqldb.Tables{Jobs: table, Failed: q.cfg.FailedTable, Batches: q.cfg.BatchesTable}, q.lock)
	return nil
}

// HooksQueue is the queue connection and queue the hook jobs go to
// (jobqueue.Queue's).
func (q *Queue) HooksQueue() (connection, queue string, ok bool) {
	if q.hooks == nil {
		return "", "", false
	}
	return q.hooks.Connection, q.hooks.Queue, true
}

// insertHookTx inserts one hook job as Queue::pushRaw does (attempts 0,
// not reserved), available at availableAt, and returns its id.
func (q *Queue) insertHookTx(ctx context.Context, tx *sql.Tx, raw []byte, availableAt int64) (int64, error) {
	if q.hooks == nil {
		return 0, errNoHooksQueue
	}
	args := []any{q.hooks.Queue, 0, nil, availableAt, q.conn.UnixNow(), payloadArg(raw)}
	if q.d.ReturningID() != "" {
		var id int64
		err := tx.QueryRowContext(ctx, q.hookSt.InsertJobs(1), args...).Scan(&id)
		return id, err
	}
	res, err := tx.ExecContext(ctx, q.hookSt.InsertJobs(1), args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// decideHooks is what an outcome's hooks push after the batch update u
// (nil: the job is in no batch, or the batch is gone): the failure's own
// hook job with the batch callbacks u triggered, or, after a success, a
// batch callbacks job when u triggered any; nil when nothing is to run.
func decideHooks(h *jobqueue.Hooks, batchID string, u *jobqueue.BatchUpdate) ([]byte, error) {
	which, err := batchCallbacks(h, u)
	if err != nil {
		return nil, err
	}
	switch {
	case h.Failure != nil:
		return h.Failure(which)
	case len(which) > 0 && h.Batch != nil:
		return h.Batch(batchID, which)
	}
	return nil, nil
}

// batchCallbacks asks the hooks which batch callbacks u triggers.
func batchCallbacks(h *jobqueue.Hooks, u *jobqueue.BatchUpdate) ([]string, error) {
	if u == nil || h.BatchCallbacks == nil {
		return nil, nil
	}
	return h.BatchCallbacks(*u)
}

// pushHooksTx writes an outcome's hook jobs in its transaction, available
// at once.
func (q *Queue) pushHooksTx(ctx context.Context, tx *sql.Tx, h *jobqueue.Hooks, batchID string, u *jobqueue.BatchUpdate) error {
	if h == nil {
		return nil
	}
	raw, err := decideHooks(h, batchID, u)
	if err != nil || raw == nil {
		return err
	}
	_, err = q.insertHookTx(ctx, tx, raw, q.conn.UnixNow())
	return err
}

// A store whose jobs live elsewhere (Laravel's Redis queue) cannot write a
// failure's hook job in the transaction that deletes the job. It writes
// the hook job, parked (available only after a delay), in the transaction
// of the failed_jobs row (RecordFailedWithHook), and unparks it in the
// transaction of the batch counters once the job is gone from its queue
// (SettleFailureHook), or deletes it with the failed row when the job
// turned out to be another worker's (ForgetFailedWithHook). A crash
// between the two leaves a parked hook job that runs once its delay is
// over: the failure stays recorded, its hooks still run once.

// RecordFailedWithHook is RecordFailed with a hook job written in the same
// transaction, available after park; it returns the uuid stored and the
// hook job's id. As with RecordFailed, an error may hide a commit: look
// the failed row up (and the hook job: FindHookByUUID) before writing
// them again.
func (q *Queue) RecordFailedWithHook(ctx context.Context, queue string, payload []byte, uuid, exception string, hook []byte, park time.Duration) (string, int64, error) {
	if uuid == "" {
		return "", 0, jobqueue.ErrNoUUID
	}
	if q.hooks == nil {
		return "", 0, errNoHooksQueue
	}
	exception = utf8OrQuestionMarks(exception)
	var stored string
	var hookID int64
	for try := 0; ; try++ {
		err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
			var err error
			if stored, err = q.insertFailedTx(ctx, tx, queue, payload, uuid, exception); err != nil {
				return err
			}
			hookID, err = q.insertHookTx(ctx, tx, hook, q.conn.UnixNow()+delaySeconds(park))
			return err
		})
		if err == nil || try >= 3 || !q.d.IsUniqueViolation(err) {
			return stored, hookID, err
		}
	}
}

// SettleFailureHook is a failure's last write, after its job is gone from
// its queue: the batch's failure (batch, when the job counts in one) and
// the failure's hook job, rewritten with the batch callbacks the update
// triggered and made available now, in one transaction. hookID 0, or a
// hook job no longer parked (its delay ran out and a worker took it),
// leaves it as it is: the batch callbacks then go in a hook job of their
// own.
func (q *Queue) SettleFailureHook(ctx context.Context, hookID int64, batch *jobqueue.BatchEntry, h *jobqueue.Hooks) error {
	if q.hooks == nil {
		return errNoHooksQueue
	}
	return q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		var u *jobqueue.BatchUpdate
		batchID := ""
		if batch != nil {
			batchID = batch.ID
			up, err := q.recordBatchFailureTx(ctx, tx, batch.ID, batch.JobUUID, batch.AllowFailures)
			switch {
			case err == nil:
				u = &up
			case !errors.Is(err, jobqueue.ErrBatchNotFound):
				return err
			}
		}
		which, err := batchCallbacks(h, u)
		if err != nil {
			return err
		}
		if hookID != 0 && h.Failure != nil {
			raw, err := h.Failure(which)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, q.hookSt.UnparkHook(), payloadArg(raw), q.conn.UnixNow(), hookID, 0)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 1 {
				return err
			}
		}
		if len(which) == 0 || h.Batch == nil {
			return nil
		}
		raw, err := h.Batch(batchID, which)
		if err != nil {
			return err
		}
		_, err = q.insertHookTx(ctx, tx, raw, q.conn.UnixNow())
		return err
	})
}

// RecordBatchSuccessWithHooks is RecordBatchSuccess with the batch
// callbacks job the update triggers (h), in one transaction. A batch that
// no longer exists is skipped.
func (q *Queue) RecordBatchSuccessWithHooks(ctx context.Context, batchID, jobUUID string, h *jobqueue.Hooks) error {
	return q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		u, err := q.recordBatchSuccessTx(ctx, tx, batchID, jobUUID)
		if errors.Is(err, jobqueue.ErrBatchNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return q.pushHooksTx(ctx, tx, h, batchID, &u)
	})
}

// ForgetFailedWithHook deletes a failed row and its parked hook job
// together: the failure was not this worker's to record. It reports
// whether the hook job was still parked; false means a worker has taken it
// (or it is gone), and its hooks may have run.
func (q *Queue) ForgetFailedWithHook(ctx context.Context, uuid string, hookID int64) (bool, error) {
	if q.hooks == nil {
		return false, errNoHooksQueue
	}
	parked := false
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		if _, err := tx.ExecContext(ctx, q.st.ForgetFailedByUUID(), uuid); err != nil {
			return err
		}
		parked = false
		if hookID == 0 {
			return nil
		}
		res, err := tx.ExecContext(ctx, q.hookSt.DeleteParkedHook(), hookID, 0)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		parked = n == 1
		return err
	})
	return parked, err
}

// FindHookByUUID finds a hook job on the hooks queue by the uuid of its
// payload (0 when there is none), for a write whose commit's answer was
// lost.
func (q *Queue) FindHookByUUID(ctx context.Context, uuid string) (int64, error) {
	if q.hooks == nil {
		return 0, errNoHooksQueue
	}
	prefix, err := json.Marshal(uuid)
	if err != nil {
		return 0, err
	}
	pattern := likeEscapeString(`{"uuid":`+string(prefix)+`,`) + "%"
	var id int64
	err = q.db.QueryRowContext(ctx, q.hookSt.FindHookByUUID(), q.hooks.Queue, pattern).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}
