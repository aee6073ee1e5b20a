package jobqueue

import "time"

// JobRow is one claimed job as its store holds it: for Laravel's database
// queue a row of the jobs table, for its Redis queue a popped job.
type JobRow struct {
	// ID is the job's id in its store (the jobs table's id). A store whose
	// jobs have no integer id (Redis) numbers the jobs it hands out, so
	// that the id is unique among the jobs a worker holds.
	ID int64
	// Queue is the queue the job was claimed from: Laravel's DatabaseJob
	// uses that name for release and failed_jobs.
	Queue string
	// Payload is the payload's raw bytes, never re-encoded.
	Payload  []byte
	Attempts int
	// ReservedAt is the reservation's token: the value the claim set, or
	// the one Extend last handed back. Every write about the job is
	// fenced by it (see Store). A store whose fence is Reservation sets it
	// to the Unix second of the claim (or of the last Extend), for display.
	ReservedAt *int64
	// Reservation is the store's own handle of the reservation, opaque to
	// the worker, when ReservedAt alone cannot name it: on Laravel's Redis
	// queue the member the pop put in the reserved set. The worker passes
	// it back unchanged with every write; Extend leaves it as it is.
	Reservation string
	AvailableAt int64
	CreatedAt   int64
}

// PushItem is one job to push.
type PushItem struct {
	Queue   string // empty: the connection's default queue
	Payload []byte
	Delay   time.Duration
}
