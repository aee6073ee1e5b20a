package beanstalkd

import (
	"context"
	"errors"
	"slices"

	"github.com/laraworker/laraworker/jobqueue"
)

// The failed jobs, batches and hook jobs of a beanstalkd connection live
// in the app's database, written as package store/redis writes them for
// a Redis queue: the failed row (with its parked hook job) before the
// job's delete, the batch's counters after.

// forgetFailure deletes the failed row written for a job another worker
// holds, with its parked hook job.
func (s *Store) forgetFailure(ctx context.Context, w *write) error {
	if w.fw.Hook == nil {
		_, err := s.db.Forget(ctx, w.fw.UUID)
		return err
	}
	parked, err := s.db.ForgetFailedWithHook(ctx, w.fw.UUID, w.fw.HookID)
	if err == nil && !parked {
		s.log.Error().Str("failed_uuid", w.fw.UUID).Str("hook_uuid", w.fw.HookUUID).
			Msg("the job's reservation turned out lost after its failure was recorded, and its hook job (RunFailureHooks) was no longer parked: its failure hooks may run in PHP for a job another worker holds")
	}
	return err
}

// settleFailure is a failure's last write, once the job is gone from
// beanstalkd: its batch's failure and, with hooks, the hook job unparked.
func (s *Store) settleFailure(ctx context.Context, w *write, f jobqueue.Followup) error {
	if f.Hooks == nil {
		if f.Batch == nil {
			return nil
		}
		return s.batchFailure(ctx, w, f.Batch)
	}
	if w.batchUnsure && f.Batch != nil {
		done, err := s.failureCounted(ctx, f.Batch)
		if err != nil || done {
			return err
		}
	}
	return s.batchDone(w, s.db.SettleFailureHook(ctx, w.fw.HookID, f.Batch, f.Hooks))
}

// batchSuccess records a finished job in its batch, with the batch
// callbacks job the update triggers (hooks).
func (s *Store) batchSuccess(ctx context.Context, w *write, b *jobqueue.BatchEntry, hooks *jobqueue.Hooks) error {
	if w.batchUnsure {
		s.log.Warn().Str("batch", b.ID).Str("uuid", b.JobUUID).
			Msg("recording a batch success again after a try whose answer was lost: if that try committed, the batch counts this job twice (and its callbacks may run twice)")
	}
	var err error
	if hooks != nil {
		err = s.db.RecordBatchSuccessWithHooks(ctx, b.ID, b.JobUUID, hooks)
	} else {
		_, err = s.db.RecordBatchSuccess(ctx, b.ID, b.JobUUID)
	}
	return s.batchDone(w, err)
}

// batchFailure records a failed job in its batch, once.
func (s *Store) batchFailure(ctx context.Context, w *write, b *jobqueue.BatchEntry) error {
	if w.batchUnsure {
		done, err := s.failureCounted(ctx, b)
		if err != nil || done {
			return err
		}
	}
	_, err := s.db.RecordBatchFailure(ctx, b.ID, b.JobUUID, b.AllowFailures)
	return s.batchDone(w, err)
}

// failureCounted reports whether the batch counts the job's failure
// already (or is gone).
func (s *Store) failureCounted(ctx context.Context, b *jobqueue.BatchEntry) (bool, error) {
	batch, err := s.db.FindBatch(ctx, b.ID)
	if errors.Is(err, jobqueue.ErrBatchNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return slices.Contains(batch.FailedJobIDs, b.JobUUID), nil
}

func (s *Store) batchDone(w *write, err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrBatchNotFound) {
		return nil
	}
	w.batchUnsure = true
	return err
}
