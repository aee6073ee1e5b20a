package jobqueue

// Followup is what Laravel writes after a job's outcome: the next link of
// its chain (after a success), its batch's counters, and the hook jobs the
// laraworker bridge runs in PHP. A store writes it together with the
// outcome, all or nothing, so it happens exactly when the outcome does:
// never for a job whose reservation was lost, never twice when the outcome
// is retried.
type Followup struct {
	// Next is the chain's next link, pushed when the job succeeded.
	Next *PushItem
	// Batch is the batch the job belongs to, if any.
	Batch *BatchEntry
	// Hooks, when set, are the jobs that run in PHP what only PHP can
	// after this outcome (bridge/PROTOCOL.md): the failed job's failed()
	// and JobFailed listeners, the batch callbacks its counter update
	// triggers. A store writes them onto its hooks queue (Queue.HooksQueue) in
	// the transaction that writes the outcome and the batch counters; a
	// store without one refuses the Followup.
	Hooks *Hooks
}

// Hooks build the bridge's hook jobs of one outcome. The store calls them
// inside its transaction, after the batch update (which they decide
// from), possibly more than once when the transaction is retried: they
// must not have side effects. What they build are payloads to push onto
// the store's hooks queue, as Queue::pushRaw does.
type Hooks struct {
	// BatchCallbacks names the batch callbacks (and events) Laravel's
	// Batch runs after the update u this outcome made; nil when none.
	BatchCallbacks func(u BatchUpdate) ([]string, error)
	// Failure builds the failed job's own hook job (RunFailureHooks),
	// which runs batchCallbacks first (nil: the job is in no batch, or its
	// update triggered none). Nil after a success.
	Failure func(batchCallbacks []string) ([]byte, error)
	// Batch builds a hook job that runs callbacks of batch batchID on
	// their own (RunBatchCallbacks): after a success, or after a failure
	// whose own hook job could not take them.
	Batch func(batchID string, callbacks []string) ([]byte, error)
}

// BatchUpdate is a batch as an outcome's update of its counters left it.
type BatchUpdate struct {
	// Before is the batch as it was read (locked) before the update: its
	// total_jobs and options.
	Before Batch
	// Counts are the counters after the update.
	Counts BatchCounts
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
