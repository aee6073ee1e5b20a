package jobqueue

import "time"

// JobRow is one claimed job as its store holds it: for Laravel's database
// queue a row of the jobs table.
type JobRow struct {
	// ID is the job's id in its store (the jobs table's id).
	ID int64
	// Queue is the queue the job was claimed from: Laravel's DatabaseJob
	// uses that name for release and failed_jobs.
	Queue string
	// Payload is the payload's raw bytes, never re-encoded.
	Payload  []byte
	Attempts int
	// ReservedAt is the reservation's token: the value the claim set, or
	// the one Extend last handed back. Every write about the job is
	// fenced by it (see Store).
	ReservedAt  *int64
	AvailableAt int64
	CreatedAt   int64
}

// PushItem is one job to push.
type PushItem struct {
	Queue   string // empty: the connection's default queue
	Payload []byte
	Delay   time.Duration
}
