package jobqueue

import "time"

// What a worker reports of itself and of the jobs it held: the names the
// worker, the fleet's records and the dashboard share.

// Outcome is what became of a job, once the write of its outcome
// landed: what a worker reports of each job it held (the fleet counts
// them per class).
type Outcome int

const (
	OutcomeDone     Outcome = iota // deleted (ran, or was skipped as Laravel would)
	OutcomeFailed                  // moved to the failed jobs
	OutcomeReleased                // put back to run again
	OutcomeReturned                // given back untouched: not this worker's to run
)

// WorkerStats is a snapshot of what a worker did and does (a Go
// worker's Stats): what the fleet's heartbeat records and the health
// check reads.
type WorkerStats struct {
	Name    string
	Queues  []string
	Started time.Time // zero before Run
	// Claimed counts reservations; each ended as one of Done (deleted),
	// Failed, Released (put back to run again, including jobs cut short at
	// shutdown), Returned (given back untouched, not Go's to run), Lost
	// (its reservation was taken by another worker, which runs the job
	// now: this outcome was not written) or Dropped (its outcome could not
	// be written before the write deadline at shutdown: the job comes back
	// after retry_after), or is Running or being written.
	Claimed, Done, Failed, Released, Returned, Lost, Dropped int64
	Running                                                  []RunningJob
	Paused                                                   bool
	PausedQueues                                             []string
	// LaravelPausedQueues are the queues Laravel's own pause holds (php
	// artisan queue:pause, 12.40+; queue:pause --all, 13.25+), as last
	// read from the app's cache: not claimed, like PausedQueues.
	LaravelPausedQueues []string

	// Interrupted counts the jobs a stop signal cut short (still running
	// when Grace ended), which are also in Released: put back with their
	// attempt restored, or counted when cut short too many times in a row
	// (the worker's Grace).
	Interrupted int64

	// ConfigProblems counts the configuration problems reported since
	// Run started (a key that does not decrypt, a missing table or
	// permission, job middleware Go cannot apply): each held jobs back,
	// given back to PHP workers or left unclaimed. A run that stops on an
	// empty queue with any exits ExitConfigProblem.
	ConfigProblems int64

	// Loops counts the iterations of the claim loop: each one claims, or
	// (paused, or with every slot busy) waits and checks the stop
	// conditions. Two more than a moment ago means a whole iteration began
	// after it: what a paused worker did not claim since, it will not
	// claim without a change.
	Loops int64
}

// RunningJob is a job a worker holds now.
type RunningJob struct {
	ID      int64
	UUID    string
	Class   string
	Queue   string
	Attempt int
	Since   time.Time
}
