package beanstalkd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/laraworker/laraworker/internal/beanstalkproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// ErrUnsupported is returned for what beanstalkd cannot do without
// reserving every job of a tube (and so counting an attempt for each):
// list a tube's jobs by class, move them, clear a tube. Laravel's
// BeanstalkdQueue does none of these either (queue:clear: "Clearing
// queues is not supported on [BeanstalkdQueue]").
var ErrUnsupported = fmt.Errorf("beanstalkd: not supported on a beanstalkd queue (beanstalkd lists no job of a tube without reserving it, which counts an attempt): %w", jobqueue.ErrNotSupported)

// Sizes counts the jobs of every tube that has any, by name (list-tubes,
// then stats-tube): ready, delayed and reserved. beanstalkd gives a job whose
// time-to-run ran out back by itself, so none is "expired"; buried jobs
// (Laravel never buries) are not counted, as Laravel's size() does not.
func (s *Store) Sizes(ctx context.Context) ([]jobqueue.QueueSize, error) {
	c, err := s.pool.adminConn(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.lock(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	tubes, err := c.c.ListTubes()
	if err != nil {
		return nil, err
	}
	slices.Sort(tubes)
	var out []jobqueue.QueueSize
	for _, tube := range tubes {
		st, err := c.c.StatsTube(tube)
		if errors.Is(err, beanstalkproto.ErrNotFound) {
			continue // gone since list-tubes
		}
		if err != nil {
			return nil, err
		}
		size := jobqueue.QueueSize{Queue: tube, Ready: st.Ready, Delayed: st.Delayed, Reserved: st.Reserved}
		if size.Total() > 0 {
			out = append(out, size)
		}
	}
	return out, nil
}

// Clear is queue:clear, which Laravel refuses on beanstalkd.
func (s *Store) Clear(context.Context, string) (int64, error) {
	return 0, fmt.Errorf("clearing queues is not supported on beanstalkd, as on Laravel's BeanstalkdQueue: %w", ErrUnsupported)
}

// CountClasses would count a tube's jobs by class: unsupported.
func (s *Store) CountClasses(context.Context, string, []string) ([]jobqueue.ClassCount, error) {
	return nil, fmt.Errorf("counting a tube's jobs by class: %w", ErrUnsupported)
}

// ClassesOnQueues would read the classes of the tubes' jobs:
// unsupported.
func (s *Store) ClassesOnQueues(context.Context, []string, int) (map[string]int64, int64, error) {
	return nil, 0, fmt.Errorf("reading the classes of a tube's jobs: %w", ErrUnsupported)
}

// FindJob would read one job by id: beanstalkd's peek shows a job's body
// but not the attempts Laravel counts on its reserves; unsupported.
func (s *Store) FindJob(context.Context, int64) (jobqueue.JobRow, error) {
	return jobqueue.JobRow{}, fmt.Errorf("reading one job: %w", ErrUnsupported)
}

// FindJobByUUID would find a job by its payload's uuid: unsupported.
func (s *Store) FindJobByUUID(context.Context, string) (jobqueue.JobRow, error) {
	return jobqueue.JobRow{}, fmt.Errorf("finding a job by uuid: %w", ErrUnsupported)
}

// Move would move a tube's jobs of some classes: unsupported.
func (s *Store) Move(context.Context, string, string, []string) (map[string]int64, error) {
	return nil, fmt.Errorf("moving jobs between tubes: %w", ErrUnsupported)
}

// MissingTables names the database tables the store writes (failed_jobs,
// job_batches) that do not exist; a beanstalkd queue has no jobs table.
func (s *Store) MissingTables(ctx context.Context) ([]jobqueue.MissingTable, error) {
	return s.db.MissingOutcomeTables(ctx)
}

// CreateTables creates failed_jobs and job_batches in the app's database
// if they are missing.
func (s *Store) CreateTables(ctx context.Context) error { return s.db.CreateOutcomeTables(ctx) }

// Push adds a job as Laravel's pushRaw / later() does: `use <tube>`, then
// `put 1024 <delay> <retry_after> <payload>`, the payload's bytes as they
// are. It returns the job's id.
func (s *Store) Push(ctx context.Context, item jobqueue.PushItem) (jobqueue.JobID, error) {
	id, err := s.PushID(ctx, item)
	return jobqueue.JobID{Num: int64(id)}, err
}

// PushID is Push, with beanstalkd's id as it is.
func (s *Store) PushID(ctx context.Context, item jobqueue.PushItem) (uint64, error) {
	ids, err := s.put(ctx, []jobqueue.PushItem{item})
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// PushMany adds several jobs as Push does (Laravel's bulk is a loop of
// pushes), pipelined per tube.
func (s *Store) PushMany(ctx context.Context, items []jobqueue.PushItem) error {
	_, err := s.put(ctx, items)
	return err
}

// put puts items in order; on an error the ones before it are queued.
func (s *Store) put(ctx context.Context, items []jobqueue.PushItem) ([]uint64, error) {
	c, err := s.pool.adminConn(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.lock(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	ids := make([]uint64, 0, len(items))
	for start := 0; start < len(items); {
		tube := s.tube(items[start].Queue)
		end := start
		var cmds []beanstalkproto.Cmd
		for ; end < len(items) && s.tube(items[end].Queue) == tube; end++ {
			cmds = append(cmds, beanstalkproto.PutCmd(beanstalkproto.DefaultPriority, beanstalkproto.Seconds(items[end].Delay), s.cfg.TTR(), items[end].Payload))
		}
		if err := c.use(tube); err != nil {
			return ids, err
		}
		replies, err := c.c.Do(cmds...)
		if err != nil {
			return ids, err
		}
		for _, r := range replies {
			if err := r.Err("put", "INSERTED"); err != nil {
				return ids, fmt.Errorf("putting a job on tube %s: %w", tube, err)
			}
			id, err := r.ID()
			if err != nil {
				return ids, err
			}
			ids = append(ids, id)
		}
		start = end
	}
	return ids, nil
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

// Retry is queue:retry onto beanstalkd: each failed job's payload, as
// hook leaves it (refreshRetryUntil; a beanstalkd payload has no
// "attempts" to reset), is put on its tube (failed_jobs.queue) and
// forgotten. Its attempts start again: a new job, reserves 0.
func (s *Store) Retry(ctx context.Context, ids []string, hook jobqueue.RetryHook) ([]jobqueue.RetryResult, error) {
	return s.db.RetryTo(ctx, ids, hook, s.pushFailed)
}

// RetryAll is `queue:retry all` (or --queue) onto beanstalkd.
func (s *Store) RetryAll(ctx context.Context, queue string, hook jobqueue.RetryHook) ([]jobqueue.RetryResult, error) {
	return s.db.RetryAllTo(ctx, queue, hook, s.pushFailed)
}

// pushFailed is Retry's pushRaw.
func (s *Store) pushFailed(ctx context.Context, f jobqueue.FailedJob, payload []byte) (int64, error) {
	id, err := s.PushID(ctx, jobqueue.PushItem{Queue: f.Queue, Payload: payload})
	return int64(id), err
}
