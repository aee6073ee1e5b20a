package sqs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/sqsproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// Sizes counts the jobs of the connection's default queue as SqsQueue's
// size() reads them (12.19+): visible messages are ready, delayed ones
// delayed, in-flight ones reserved. SQS lists no queues by connection;
// `size --queue` names others (QueueSize).
func (s *Store) Sizes(ctx context.Context) ([]jobqueue.QueueSize, error) {
	size, err := s.QueueSize(ctx, "")
	if err != nil {
		return nil, err
	}
	if size.Total() == 0 {
		return nil, nil
	}
	return []jobqueue.QueueSize{size}, nil
}

// QueueSize counts one queue's jobs (its name as the worker names it).
func (s *Store) QueueSize(ctx context.Context, queue string) (jobqueue.QueueSize, error) {
	a, err := s.q.Attributes(ctx, s.q.URL(queue))
	if err != nil {
		return jobqueue.QueueSize{}, err
	}
	if queue == "" {
		queue = s.q.Config().Queue
	}
	return jobqueue.QueueSize{Queue: queue, Ready: a.Messages, Delayed: a.Delayed, Reserved: a.NotVisible}, nil
}

// Clear is queue:clear (SqsQueue::clear): the queue's size, then
// PurgeQueue (AWS allows one purge a minute per queue).
func (s *Store) Clear(ctx context.Context, queue string) (int64, error) {
	size, err := s.QueueSize(ctx, queue)
	if err != nil {
		return 0, err
	}
	return size.Total(), s.q.Purge(ctx, s.q.URL(queue))
}

// ErrNoClassCounts says SQS cannot count a queue's jobs by class without
// receiving them (which counts an attempt on each).
var ErrNoClassCounts = fmt.Errorf("sqsstore: SQS cannot count a queue's jobs by class without receiving them: %w", jobqueue.ErrNotSupported)

// CountClasses is ErrNoClassCounts.
func (s *Store) CountClasses(context.Context, string, []string) ([]jobqueue.ClassCount, error) {
	return nil, ErrNoClassCounts
}

// moveHold is how long Move keeps the messages it receives and leaves
// invisible, so that it does not receive them again.
const moveHold = 5 * time.Minute

// Move puts the visible jobs of classes on queue from onto queue to: it
// receives the visible messages (10 a request) until none is left, sends
// each of the classes to the other queue (the same body; a FIFO queue's
// group and a fresh deduplication id) and deletes it, and gives the
// others back when done (see giveBack). Delayed and in-flight messages
// are not seen. A moved job is a new message: its receive count, the
// attempts, starts again.
func (s *Store) Move(ctx context.Context, from, to string, classes []string) (map[string]int64, error) {
	moved := map[string]int64{}
	fromURL := s.q.URL(from)
	var others []sqsproto.Message
	defer func() {
		for _, m := range others {
			s.giveBack(context.WithoutCancel(ctx), m, s.isVapor(m))
		}
	}()
	opts := jobqueue.ClaimOptions{DisplayNames: classes}
	for {
		msgs, err := s.q.Receive(ctx, fromURL, sqsproto.MaxBatch, 0)
		if err != nil || len(msgs) == 0 {
			return moved, err
		}
		for _, m := range msgs {
			if !wanted(m.Body, opts) || !hasClass(m.Body) {
				others = append(others, m)
				_ = s.q.ChangeVisibility(ctx, fromURL, m.ReceiptHandle, int(moveHold/time.Second))
				continue
			}
			if _, err := s.send(ctx, jobqueue.PushItem{Queue: to, Payload: m.Body}); err != nil {
				others = append(others, m)
				return moved, err
			}
			if err := s.q.Delete(ctx, fromURL, m.ReceiptHandle); err != nil {
				return moved, fmt.Errorf("sqsstore: a moved job was sent to %s but not deleted from %s (it is on both): %w", to, from, err)
			}
			moved[classOf(m.Body, classes)]++
		}
	}
}

// hasClass: the body names a class (an unreadable one is never moved).
func hasClass(body []byte) bool { return classOf(body, nil) != "" }

// classOf is the body's displayName, spelled as in classes when one
// matches ignoring case.
func classOf(body []byte, classes []string) string {
	name := displayName(body)
	for _, c := range classes {
		if strings.EqualFold(c, name) {
			return c
		}
	}
	return name
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

// Retry is queue:retry onto SQS: each failed job's payload gets its
// "attempts" reset where it has one (Vapor's; RetryCommand's
// resetAttempts), then hook (refreshRetryUntil), and is sent to its
// failed_jobs queue, the queue URL, used as it is (as pushRaw does with a
// URL), and forgotten. NewID is 0: SQS's ids are strings.
func (s *Store) Retry(ctx context.Context, ids []string, hook jobqueue.RetryHook) ([]jobqueue.RetryResult, error) {
	return s.db.RetryTo(ctx, ids, resettingAttempts(hook), s.pushFailed)
}

// RetryAll is `queue:retry all` (or --queue: the queue URL, as
// failed_jobs holds it) onto SQS.
func (s *Store) RetryAll(ctx context.Context, queue string, hook jobqueue.RetryHook) ([]jobqueue.RetryResult, error) {
	return s.db.RetryAllTo(ctx, queue, resettingAttempts(hook), s.pushFailed)
}

// pushFailed is Retry's pushRaw.
func (s *Store) pushFailed(ctx context.Context, f jobqueue.FailedJob, payload []byte) (int64, error) {
	_, err := s.send(ctx, jobqueue.PushItem{Queue: f.Queue, Payload: payload})
	return 0, err
}

// resettingAttempts is RetryCommand's refreshRetryUntil(resetAttempts()).
func resettingAttempts(hook jobqueue.RetryHook) jobqueue.RetryHook {
	return func(payload []byte) ([]byte, error) {
		if _, ok := sqsproto.VaporAttempts(payload); ok {
			var err error
			if payload, err = sqsproto.SetAttempts(payload, 0); err != nil {
				return nil, err
			}
		}
		if hook == nil {
			return payload, nil
		}
		return hook(payload)
	}
}

// ClassesOnQueues would read the classes of the queues' jobs: SQS shows
// none without receiving it, which counts a receive.
func (s *Store) ClassesOnQueues(context.Context, []string, int) (map[string]int64, int64, error) {
	return nil, 0, ErrNoClassCounts
}

// FindJob would read one job by id: SQS has no lookup of a message.
func (s *Store) FindJob(context.Context, int64) (jobqueue.JobRow, error) {
	return jobqueue.JobRow{}, fmt.Errorf("sqsstore: reading one job: %w", jobqueue.ErrNotSupported)
}

// FindJobByUUID would find a job by its payload's uuid: SQS has no
// lookup of a message.
func (s *Store) FindJobByUUID(context.Context, string) (jobqueue.JobRow, error) {
	return jobqueue.JobRow{}, fmt.Errorf("sqsstore: finding a job by uuid: %w", jobqueue.ErrNotSupported)
}

// MissingTables names the database tables the store writes (failed_jobs,
// job_batches) that do not exist; SQS has no jobs table.
func (s *Store) MissingTables(ctx context.Context) ([]jobqueue.MissingTable, error) {
	return s.db.MissingOutcomeTables(ctx)
}

// CreateTables creates failed_jobs and job_batches in the app's database
// if they are missing.
func (s *Store) CreateTables(ctx context.Context) error { return s.db.CreateOutcomeTables(ctx) }
