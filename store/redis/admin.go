package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// Sizes counts the jobs of every queue that has any, found by a scan of
// the connection's queue keys. A due delayed job counts as ready and an
// expired reservation as expired: the next pop moves both to the list.
func (s *Store) Sizes(ctx context.Context) ([]jobqueue.QueueSize, error) {
	names, err := s.q.Queues(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]jobqueue.QueueSize, 0, len(names))
	for _, name := range names {
		c, err := s.q.Counts(ctx, name)
		if err != nil {
			return nil, err
		}
		size := jobqueue.QueueSize{
			Queue:    name,
			Ready:    c.Ready + c.DelayedDue,
			Delayed:  c.Delayed - c.DelayedDue,
			Reserved: c.Reserved - c.ReservedExpired,
			Expired:  c.ReservedExpired,
		}
		if size.Total() > 0 {
			out = append(out, size)
		}
	}
	return out, nil
}

// Clear is queue:clear: the queue's keys deleted, running jobs'
// reservations included.
func (s *Store) Clear(ctx context.Context, queue string) (int64, error) {
	return s.q.Clear(ctx, queue)
}

// MissingTables names the database tables the store writes (failed_jobs,
// job_batches) that do not exist; a Redis queue has no jobs table.
func (s *Store) MissingTables(ctx context.Context) ([]jobqueue.MissingTable, error) {
	return s.db.MissingOutcomeTables(ctx)
}

// CreateTables creates failed_jobs and job_batches in the app's database
// if they are missing.
func (s *Store) CreateTables(ctx context.Context) error { return s.db.CreateOutcomeTables(ctx) }

// FindJob is not supported: a Redis job has no number (JobRow.ID is the
// worker's own count), and `inspect --id` has none to look up.
func (s *Store) FindJob(context.Context, int64) (jobqueue.JobRow, error) {
	return jobqueue.JobRow{}, fmt.Errorf("%w: a Redis job has no number to look it up by", jobqueue.ErrNotSupported)
}

// FindJobByUUID is not supported: no index names a Redis job by its
// payload's uuid, and the lists are not read whole to find one.
func (s *Store) FindJobByUUID(context.Context, string) (jobqueue.JobRow, error) {
	return jobqueue.JobRow{}, fmt.Errorf("%w: the Redis queue has no index of its jobs' uuids", jobqueue.ErrNotSupported)
}

// ClassesOnQueues is jobqueue.Admin's: the displayNames of the
// first limit jobs of the queues (each queue's list, then its delayed
// set), read inside Redis (the jobs never reach Go: one of many megabytes
// costs what a small one does), and how many jobs it read. A job whose
// class its bytes do not tell counts under "".
func (s *Store) ClassesOnQueues(ctx context.Context, queues []string, limit int) (map[string]int64, int64, error) {
	classes := map[string]int64{}
	var read int64
	for _, queue := range queues {
		left := int64(limit) - read
		if left <= 0 {
			break
		}
		names, err := s.q.SampleClasses(ctx, queue, int(left))
		if err != nil {
			return nil, read, err
		}
		for _, name := range names {
			classes[name]++
		}
		read += int64(len(names))
	}
	return classes, read, nil
}

// CountClasses counts the jobs of each class on queue.
func (s *Store) CountClasses(ctx context.Context, queue string, classes []string) ([]jobqueue.ClassCount, error) {
	counts, err := s.q.CountClasses(ctx, queue, classes)
	if err != nil {
		return nil, err
	}
	out := make([]jobqueue.ClassCount, len(counts))
	for i, c := range counts {
		out[i] = jobqueue.ClassCount{Class: c.Class, Unreserved: c.Ready + c.Delayed, Reserved: c.Reserved}
	}
	return out, nil
}

// Move puts the ready and delayed jobs of classes on queue from onto
// queue to, in one script, never touching a reserved one. On a cluster
// both queues must share a slot.
func (s *Store) Move(ctx context.Context, from, to string, classes []string) (map[string]int64, error) {
	return s.q.Move(ctx, from, to, classes)
}

// Push adds a job as dispatch() would on this connection: a payload
// built as for the database queue gets RedisQueue's "id" and "attempts"
// (redisproto.PreparePayload), then is pushed, or put in the delayed set
// for a Delay. Redis ids are strings: it returns the payload's "id"
// (JobID.Str).
func (s *Store) Push(ctx context.Context, item jobqueue.PushItem) (jobqueue.JobID, error) {
	raw, _, err := redisproto.PreparePayload(item.Payload)
	if err == nil {
		raw, err = s.horizonDispatch(raw)
	}
	if err != nil {
		return jobqueue.JobID{}, err
	}
	var id string
	if item.Delay > 0 {
		id, err = s.q.Later(ctx, item.Queue, raw, item.Delay)
	} else {
		id, err = s.q.Push(ctx, item.Queue, raw)
	}
	if err == nil {
		s.horizonPushed(ctx, item.Queue, raw)
	}
	return jobqueue.JobID{Str: id}, err
}

// PushMany adds several jobs as Push does, in MULTI transactions as
// Laravel's bulk().
func (s *Store) PushMany(ctx context.Context, items []jobqueue.PushItem) error {
	prepared := make([]jobqueue.PushItem, len(items))
	for i, it := range items {
		raw, _, err := redisproto.PreparePayload(it.Payload)
		if err == nil {
			raw, err = s.horizonDispatch(raw)
		}
		if err != nil {
			return err
		}
		prepared[i] = jobqueue.PushItem{Queue: it.Queue, Payload: raw, Delay: it.Delay}
	}
	if err := s.q.PushMany(ctx, prepared); err != nil {
		return err
	}
	if s.horizon != nil {
		byQueue := map[string][][]byte{}
		var queues []string
		for _, it := range prepared {
			if _, ok := byQueue[it.Queue]; !ok {
				queues = append(queues, it.Queue)
			}
			byQueue[it.Queue] = append(byQueue[it.Queue], it.Payload)
		}
		for _, q := range queues {
			s.horizonPushed(ctx, q, byQueue[q]...)
		}
	}
	return nil
}

// ListFailed returns failed jobs newest first (queue:failed).
func (s *Store) ListFailed(ctx context.Context, queue string) ([]jobqueue.FailedJob, error) {
	return s.db.ListFailed(ctx, queue)
}

// FindFailed looks a failed job up by uuid or numeric id.
func (s *Store) FindFailed(ctx context.Context, idOrUUID string) (jobqueue.FailedJob, error) {
	return s.db.FindFailed(ctx, idOrUUID)
}

// Forget deletes one failed job (queue:forget).
func (s *Store) Forget(ctx context.Context, idOrUUID string) (bool, error) {
	return s.db.Forget(ctx, idOrUUID)
}

// Flush deletes failed jobs (queue:flush).
func (s *Store) Flush(ctx context.Context, olderThan time.Duration) (int64, error) {
	return s.db.Flush(ctx, olderThan)
}

// PruneFailed is queue:prune-failed.
func (s *Store) PruneFailed(ctx context.Context, olderThan time.Duration) (int64, error) {
	return s.db.PruneFailed(ctx, olderThan)
}

// Retry is queue:retry onto the Redis queue: each failed job's payload
// gets "attempts" 0 (resetAttempts), then hook (refreshRetryUntil), is
// pushed to its queue and forgotten. NewID is 0: Redis ids are strings.
func (s *Store) Retry(ctx context.Context, ids []string, hook jobqueue.RetryHook) ([]jobqueue.RetryResult, error) {
	return s.db.RetryTo(ctx, ids, resettingAttempts(hook), s.pushFailed)
}

// RetryAll is `queue:retry all` (or --queue) onto the Redis queue.
func (s *Store) RetryAll(ctx context.Context, queue string, hook jobqueue.RetryHook) ([]jobqueue.RetryResult, error) {
	return s.db.RetryAllTo(ctx, queue, resettingAttempts(hook), s.pushFailed)
}

// pushFailed is Retry's pushRaw: the payload as the retry made it.
func (s *Store) pushFailed(ctx context.Context, f jobqueue.FailedJob, payload []byte) (int64, error) {
	if s.horizon != nil {
		// Horizon's pushRaw, without a job object.
		var err error
		if payload, err = s.horizon.PrepareRaw(payload); err != nil {
			return 0, err
		}
	}
	_, err := s.q.Push(ctx, f.Queue, payload)
	if err == nil {
		s.horizonPushed(ctx, f.Queue, payload)
	}
	return 0, err
}

// resettingAttempts is RetryCommand's refreshRetryUntil(resetAttempts()).
func resettingAttempts(hook jobqueue.RetryHook) jobqueue.RetryHook {
	return func(payload []byte) ([]byte, error) {
		p, err := redisproto.ResetAttempts(payload)
		if err != nil || hook == nil {
			return p, err
		}
		return hook(p)
	}
}
