package jobqueue

// Followup is what Laravel writes after a job's outcome: the next link of
// its chain (after a success) and its batch's counters. A store writes it
// together with the outcome, all or nothing, so it happens exactly when
// the outcome does: never for a job whose reservation was lost, never
// twice when the outcome is retried.
type Followup struct {
	// Next is the chain's next link, pushed when the job succeeded.
	Next *PushItem
	// Batch is the batch the job belongs to, if any.
	Batch *BatchEntry
}

// BatchEntry names a job in its batch.
type BatchEntry struct {
	ID      string
	JobUUID string
	// AllowFailures is the batch's allowFailures option (read from its
	// PHP-serialized options by the caller): without it, the first failure
	// cancels the batch.
	AllowFailures bool
}

// Batch is one of Laravel's job batches (a job_batches row).
type Batch struct {
	ID           string
	Name         string
	TotalJobs    int64
	PendingJobs  int64
	FailedJobs   int64
	FailedJobIDs []string
	// Options is the PHP-serialized options array (base64-decoded on
	// PostgreSQL as Laravel does when it contains no ':' or ';').
	Options     []byte
	CancelledAt *int64
	CreatedAt   int64
	FinishedAt  *int64
}

// Cancelled reports whether the batch was cancelled.
func (b Batch) Cancelled() bool { return b.CancelledAt != nil }

// Finished reports whether the batch has finished.
func (b Batch) Finished() bool { return b.FinishedAt != nil }

// BatchCounts are the counters after an atomic update, as Laravel's
// UpdatedBatchJobCounts.
type BatchCounts struct {
	PendingJobs int64
	FailedJobs  int64
}

// AllJobsHaveRanExactlyOnce is Laravel's condition for `finally` callbacks.
func (c BatchCounts) AllJobsHaveRanExactlyOnce() bool { return c.PendingJobs-c.FailedJobs == 0 }
