package snapshot

import (
	"context"
	"errors"
	"time"
)

// JobSource reads a queue's pending jobs for a Snapshot: SQLJobs for the
// jobs table of a database queue, redisjobs.Source for a Redis queue.
// Every read it makes is bounded: a refresh costs the same with a hundred
// jobs or ten million. Refresh and Summarize are called from the
// snapshot's goroutine, List and Job from the pages' at any time.
type JobSource interface {
	// Refresh reads what changed since the last refresh, within the
	// source's budget. known are the queues the fleet names (the workers'
	// queues and the paused ones), for a source that cannot list its
	// queues in one bounded read.
	Refresh(ctx context.Context, now time.Time, known []string) error
	// Summarize writes the jobs' part of sum (Driver, JobsRows, Queues,
	// Classes, Sampled, Reserved, ReservedTotal, NextDue, Schedule,
	// JobsPass, JobsCaughtUp, Tags, TagsDropped) as of now, from what the
	// refreshes read.
	Summarize(sum *Summary, now time.Time)
	// List returns up to limit jobs matching f in the order workers take
	// them, from cursor ("" for the first page), and the cursor of the
	// next page ("" when there is none).
	List(ctx context.Context, f JobFilter, cursor string, limit int) (rows []JobRow, next string, err error)
	// Job reads one job whole. A job that is not there (any more) is an
	// error wrapping ErrNotFound that says why.
	Job(ctx context.Context, ref JobRef) (JobRow, error)
	// ReadTags makes the refreshes read the models jobs hold, as tags
	// (called before the first refresh, unless payloads are hidden).
	ReadTags()
}

// ErrNotFound wraps a source's answer about a job it does not have.
var ErrNotFound = errors.New("not found")

// JobFilter selects jobs for the jobs list.
type JobFilter struct {
	Queue, Class string
	State        string // "", "ready", "delayed", "reserved"
	Tag          string // a model, "App\Models\Podcast:42"
}

// JobStates are the states a JobFilter can select.
var JobStates = []string{"ready", "delayed", "reserved"}

// JobRef names one job: its id (the jobs table's, or a Redis payload's
// "id") and, for a source whose ids are not unique across queues, its
// queue.
type JobRef struct {
	ID    string
	Queue string
}

// JobRow is a pending job as a page shows it. Times a source cannot tell
// are zero.
type JobRow struct {
	// ID is the jobs table's id (0 on a Redis queue), JobID the Redis
	// payload's "id" ("" on a database queue).
	ID          int64
	JobID       string
	Queue       string
	Attempts    int64
	ReservedAt  *time.Time
	AvailableAt time.Time
	CreatedAt   time.Time
	UUID, Class string
	Payload     []byte // whole payload (detail) or a prefix (lists)
	Tags        []string
}
