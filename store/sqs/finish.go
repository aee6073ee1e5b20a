package sqs

import (
	"context"
	"errors"

	"github.com/laraworker/laraworker/jobqueue"
)

// errNoHooksQueue refuses hook jobs on a store opened without a hooks
// queue.
var errNoHooksQueue = errors.New("sqsstore: the outcome has hook jobs but the store's database was opened without a hooks queue (database.Options.HooksQueue)")

// Finish removes a finished job with its followup, in Laravel's order:
// the chain's next link is sent (the job dispatches it before it is
// deleted) after the receipt handle is checked, so a job another worker
// holds sends none; then the message is deleted; then the batch's
// success is recorded in the database (with the batch callbacks job the
// update triggers, f.Hooks). A retry after a failure goes on from the
// step that failed.
func (s *Store) Finish(ctx context.Context, r jobqueue.JobRow, f jobqueue.Followup) error {
	if f.Hooks != nil {
		if _, _, ok := s.db.HooksQueue(); !ok {
			return errNoHooksQueue
		}
	}
	h := s.heldOf(r)
	if h == nil {
		return errUnknownRow
	}
	if f.Next != nil && !h.pushed {
		if err := s.fence(ctx, r, h); err != nil {
			return err
		}
		if h.next == nil {
			body, err := s.preparePush(ctx, f.Next.Payload)
			if err != nil {
				return err
			}
			h.next = body
		}
		if _, err := s.send(ctx, jobqueue.PushItem{Queue: f.Next.Queue, Payload: h.next, Delay: f.Next.Delay}); err != nil {
			return err
		}
		h.pushed = true
	}
	if !h.deleted {
		if err := s.deleteOne(ctx, r); err != nil {
			if errors.Is(err, jobqueue.ErrReservationLost) {
				s.forget(r)
			}
			return err
		}
		h.deleted = true
	}
	if f.Batch != nil && !h.batchDone {
		var err error
		if f.Hooks != nil {
			err = s.db.RecordBatchSuccessWithHooks(ctx, f.Batch.ID, f.Batch.JobUUID, f.Hooks)
		} else {
			_, err = s.db.RecordBatchSuccess(ctx, f.Batch.ID, f.Batch.JobUUID)
		}
		if err != nil && !errors.Is(err, jobqueue.ErrBatchNotFound) {
			return err
		}
		h.batchDone = true
	}
	s.deleted(ctx, r)
	return nil
}

// Fail is Job::fail on SQS: the receipt handle checked (a lost one
// writes nothing), the failed_jobs row written with the queue URL as its
// queue (as SqsJob::getQueue gives it; with the failure's hook job,
// parked, when there are hooks), the message deleted (when that finds
// the reservation lost, the row and the hook job are deleted again),
// then the batch's failure recorded (and the hook job unparked with the
// batch callbacks that update triggered). The overflow payload's cache
// entry is forgotten with the message, as SqsJob::delete does.
func (s *Store) Fail(ctx context.Context, r jobqueue.JobRow, uuid, exception string, f jobqueue.Followup) error {
	if uuid == "" {
		return jobqueue.ErrNoUUID
	}
	if f.Hooks != nil {
		if _, _, ok := s.db.HooksQueue(); !ok {
			return errNoHooksQueue
		}
	}
	h := s.heldOf(r)
	if h == nil {
		return errUnknownRow
	}
	if err := s.fence(ctx, r, h); err != nil {
		return err
	}
	if err := s.recordFailed(ctx, r, h, uuid, exception, f.Hooks); err != nil {
		return err
	}
	if !h.deleted {
		err := s.deleteOne(ctx, r)
		if errors.Is(err, jobqueue.ErrReservationLost) {
			return errors.Join(err, s.unrecordFailed(ctx, r, h))
		}
		if err != nil {
			return err
		}
		h.deleted = true
	}
	if err := s.settleFailure(ctx, h, f); err != nil {
		return err
	}
	s.deleted(ctx, r)
	return nil
}

// recordFailed writes the failed_jobs row once.
func (s *Store) recordFailed(ctx context.Context, r jobqueue.JobRow, h *held, uuid, exception string, hooks *jobqueue.Hooks) error {
	if h.failedRow {
		return nil
	}
	if hooks == nil || hooks.Failure == nil {
		stored, err := s.db.RecordFailed(ctx, r.Queue, r.Payload, uuid, exception)
		if err != nil {
			return err
		}
		h.failedUUID, h.failedRow = stored, true
		return nil
	}
	if h.hook == nil {
		raw, err := hooks.Failure(nil)
		if err != nil {
			return err
		}
		h.hook = raw
	}
	stored, id, err := s.db.RecordFailedWithHook(ctx, r.Queue, r.Payload, uuid, exception, h.hook, s.RetryAfter())
	if err != nil {
		return err
	}
	h.failedUUID, h.hookID, h.failedRow = stored, id, true
	return nil
}

// unrecordFailed deletes the failed row (and its parked hook job) written
// for a job another worker turned out to hold.
func (s *Store) unrecordFailed(ctx context.Context, r jobqueue.JobRow, h *held) error {
	s.forget(r)
	if h.hook == nil {
		_, err := s.db.Forget(ctx, h.failedUUID)
		return err
	}
	_, err := s.db.ForgetFailedWithHook(ctx, h.failedUUID, h.hookID)
	return err
}

// settleFailure records the batch's failure, with the hook job unparked
// when there are hooks.
func (s *Store) settleFailure(ctx context.Context, h *held, f jobqueue.Followup) error {
	if h.batchDone {
		return nil
	}
	var err error
	switch {
	case f.Hooks != nil:
		err = s.db.SettleFailureHook(ctx, h.hookID, f.Batch, f.Hooks)
	case f.Batch != nil:
		_, err = s.db.RecordBatchFailure(ctx, f.Batch.ID, f.Batch.JobUUID, f.Batch.AllowFailures)
	}
	if err != nil && !errors.Is(err, jobqueue.ErrBatchNotFound) {
		return err
	}
	h.batchDone = true
	return nil
}
