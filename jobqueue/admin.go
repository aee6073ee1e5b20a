package jobqueue

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// QueueSize counts the jobs of one queue by state at the time of the call.
type QueueSize struct {
	Queue    string
	Ready    int64 // not reserved and available now
	Delayed  int64 // not reserved, available later
	Reserved int64 // reserved, reservation younger than retry_after
	Expired  int64 // reserved longer than retry_after: claimable again
}

// Total is every job of the queue.
func (s QueueSize) Total() int64 { return s.Ready + s.Delayed + s.Reserved + s.Expired }

// ClassCount is how many jobs of one class (payload displayName) a queue
// holds, by state.
type ClassCount struct {
	Class      string
	Unreserved int64 // ready or delayed: what Move moves
	Reserved   int64 // reserved (running, or a crashed worker's): never moved
}

// Admin is the `php artisan queue:*` side of a queue connection: what
// the CLI and the dashboard do to its jobs.
type Admin interface {
	// Sizes counts the jobs of every queue that has any.
	Sizes(ctx context.Context) ([]QueueSize, error)
	// Clear is queue:clear: it deletes every job of the queue, reserved
	// ones included, and returns how many.
	Clear(ctx context.Context, queue string) (int64, error)
	// CountClasses counts the jobs of each class on queue.
	CountClasses(ctx context.Context, queue string, classes []string) ([]ClassCount, error)
	// ClassesOnQueues counts the payload displayNames of the first limit
	// jobs of the queues (oldest first) and says how many jobs it read:
	// which classes wait, without reading a whole backlog (the CLI names
	// them when a route or a move matches none).
	ClassesOnQueues(ctx context.Context, queues []string, limit int) (classes map[string]int64, read int64, err error)
	// Move puts the unreserved jobs of classes on queue from onto queue
	// to, never touching a reserved one, and returns how many moved per
	// class.
	Move(ctx context.Context, from, to string, classes []string) (map[string]int64, error)
	// Push adds a job as Queue::pushRaw / later() would and returns its
	// id; PushMany adds several at once.
	Push(ctx context.Context, item PushItem) (JobID, error)
	PushMany(ctx context.Context, items []PushItem) error
	// FindJob returns the queued job (reserved or not) with id, or
	// ErrJobNotFound: `laraworker inspect --id`. FindJobByUUID returns the
	// one whose payload has uuid (--uuid); a store without an index on
	// the uuid may read every job to find it.
	FindJob(ctx context.Context, id int64) (JobRow, error)
	FindJobByUUID(ctx context.Context, uuid string) (JobRow, error)
	// Retry pushes failed jobs back onto their queue and forgets them
	// (queue:retry); RetryAll does it for every failed job, or those of
	// one queue. The pushes go onto this store's queue, as Laravel's
	// RetryCommand pushes through the connection's queue.
	Retry(ctx context.Context, ids []string, hook RetryHook) ([]RetryResult, error)
	RetryAll(ctx context.Context, queue string, hook RetryHook) ([]RetryResult, error)
}

// JobID is the id a store gave a job it pushed: a number where the
// backend numbers its jobs (the jobs table's id, beanstalkd's), a string
// where it names them (the payload's "id" on Redis, SQS's MessageId).
type JobID struct {
	Num int64
	Str string
}

// String is the id as Laravel prints it.
func (id JobID) String() string {
	if id.Str != "" {
		return id.Str
	}
	return strconv.FormatInt(id.Num, 10)
}

// MarshalJSON writes a number id as a JSON number and a string one as a
// JSON string, as the backend names it.
func (id JobID) MarshalJSON() ([]byte, error) {
	if id.Str != "" {
		return json.Marshal(id.Str)
	}
	return json.Marshal(id.Num)
}

// FailedJob is one failed job (a failed_jobs row).
type FailedJob struct {
	ID         int64
	UUID       string
	Connection string
	Queue      string
	Payload    []byte
	Exception  string
	FailedAt   string // 'Y-m-d H:i:s' as stored
	// Class is the payload's displayName ("" if the payload is unreadable).
	Class string
}

// RetryHook may rewrite a failed payload before it is pushed again (for
// instance to refresh retryUntil, which needs the PHP command). nil keeps
// the bytes unchanged.
type RetryHook func(payload []byte) ([]byte, error)

// RetryResult reports what happened to one failed job.
type RetryResult struct {
	Failed FailedJob
	NewID  int64 // id of the new job, 0 on error or where ids are not numbers (Redis)
	Err    error
}

// FailedJobs is Laravel's failed job provider (FailedJobProviderInterface
// and its pruning): what queue:failed, queue:forget, queue:flush and
// queue:prune-failed read and delete. Retrying, which pushes onto the
// queue, is Admin's.
type FailedJobs interface {
	// ListFailed returns failed jobs newest first, optionally only those
	// of one queue.
	ListFailed(ctx context.Context, queue string) ([]FailedJob, error)
	// FindFailed looks a failed job up by uuid or numeric id, or returns
	// ErrFailedJobNotFound.
	FindFailed(ctx context.Context, idOrUUID string) (FailedJob, error)
	// Forget deletes one failed job and reports whether there was one.
	Forget(ctx context.Context, idOrUUID string) (bool, error)
	// Flush deletes failed jobs, with olderThan > 0 only those older.
	Flush(ctx context.Context, olderThan time.Duration) (int64, error)
	// PruneFailed deletes failed jobs older than olderThan.
	PruneFailed(ctx context.Context, olderThan time.Duration) (int64, error)
}
