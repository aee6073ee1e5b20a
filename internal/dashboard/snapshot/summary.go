package snapshot

import (
	"slices"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
)

// Summary is what the pages show of the queue, built after each refresh.
// It never changes once published.
type Summary struct {
	AsOf time.Time
	Took time.Duration // the refresh's reads
	Err  string        // the last refresh's error, secrets removed

	// Driver is the queue's driver as its JobSource reads it: "database"
	// or "redis" (the pages say how counts are read).
	Driver string
	// JobsRows counts the pending jobs the counts hold.
	JobsRows int
	Queues   []QueueCounts
	Classes  []ClassCounts
	// Sampled, when not 0, says Classes, the jobs list and the tags count
	// only the first Sampled jobs of each queue's ready list and delayed
	// set (a Redis queue, whose lists are never read whole).
	Sampled  int
	Reserved []ReservedJob // oldest reservation first, at most MaxReservedShown
	// ReservedTotal counts every reserved job, shown or not.
	ReservedTotal int
	NextDue       []DueJob
	Schedule      []Bucket
	JobsPass      PassState
	// JobsCaughtUp is false while the first read of the jobs is under
	// way (large tables take several refreshes; a Redis connection's
	// queues are found by a scan of its keys, a slice per refresh).
	JobsCaughtUp bool

	// Tags says whether the caches read the models jobs hold (off with
	// --hide-payloads); TagsDropped counts tags not kept because a cache
	// held maxDistinctTags.
	Tags        bool
	TagsDropped int64

	FailedTotal    int64
	FailedByClass  []Named
	FailedByQueue  []Named
	FailedCaughtUp bool
	FailedPass     PassState

	Workers []fleet.WorkerRow
	Pauses  []fleet.Pause
	// LaravelPaused are the queues shown whose Laravel pause (php artisan
	// queue:pause; LaravelPausedAll: queue:pause --all) holds every PHP
	// and Go worker; LaravelPauseErr says why they could not be read.
	LaravelPaused    []string
	LaravelPausedAll bool
	LaravelPauseErr  string
	// FleetErr says why the fleet could not be read (laraworker's tables
	// missing, typically).
	FleetErr string
}

// QueueCounts are one queue's jobs by state.
type QueueCounts struct {
	Queue    string
	Ready    int64 // not reserved, available now
	Delayed  int64 // not reserved, available later
	Reserved int64 // reserved within retry_after
	Expired  int64 // reserved longer than retry_after: claimable again
	// OldestReady is how long the longest-waiting ready job has been
	// available (0 when none is ready, or when no source tells).
	OldestReady time.Duration
}

// ClassCounts are the pending jobs of one class on one queue.
type ClassCounts struct {
	Queue, Class                      string
	Ready, Delayed, Reserved, Expired int64
}

// ReservedJob is a reserved job: one running now (or abandoned).
type ReservedJob struct {
	// ID is the jobs table's id (0 on a Redis queue); JobID the Redis
	// payload's "id" ("" on a database queue) and UUID the payload's uuid
	// (Redis: what the fleet's running jobs are matched by).
	ID         int64
	JobID      string
	UUID       string
	Queue      string
	Class      string
	Attempts   int
	ReservedAt time.Time
	Expired    bool // past retry_after: another worker may take it
}

// DueJob is a delayed job and when it becomes available.
type DueJob struct {
	ID          int64  // the jobs table's id; 0 on a Redis queue
	JobID       string // the Redis payload's "id"
	Queue       string
	Class       string
	AvailableAt time.Time
}

// Bucket counts delayed jobs by when they become available.
type Bucket struct {
	Label string
	Count int64
}

// Named is a count by name.
type Named struct {
	Name  string
	Count int64
}

// PassState tracks a rolling pass over a table.
type PassState struct {
	Started, LastDone time.Time
	LastTook          time.Duration
}

const (
	// MaxReservedShown bounds Summary.Reserved.
	MaxReservedShown = 1000
	// MaxDueShown bounds Summary.NextDue.
	MaxDueShown = 20
)

// DelayBucket is one span of the delayed schedule: the jobs available
// after the previous bucket's Until and at most at Until (unix seconds).
type DelayBucket struct {
	Label string
	Until int64
}

// DelayBuckets are the spans the delayed schedule counts, as of now; the
// last one holds everything later.
func DelayBuckets(now time.Time) []DelayBucket {
	u := now.Unix()
	return []DelayBucket{{"within a minute", u + 60}, {"within 10 minutes", u + 600}, {"within an hour", u + 3600},
		{"within a day", u + 86400}, {"later", 1 << 62}}
}

// AppendDue keeps the MaxDueShown soonest delayed jobs, soonest first.
func AppendDue(due []DueJob, j DueJob) []DueJob {
	if len(due) == MaxDueShown && !j.AvailableAt.Before(due[len(due)-1].AvailableAt) {
		return due
	}
	i, _ := slices.BinarySearchFunc(due, j, func(a, b DueJob) int { return a.AvailableAt.Compare(b.AvailableAt) })
	due = slices.Insert(due, i, j)
	if len(due) > MaxDueShown {
		due = due[:MaxDueShown]
	}
	return due
}
