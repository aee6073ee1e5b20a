package bridgeproto

import (
	"errors"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// BatchState is a batch as a Go worker's update of its job_batches row
// leaves it: the counts that update returned (Laravel's
// UpdatedBatchJobCounts) and what the batch's options declare.
type BatchState struct {
	// TotalJobs is total_jobs as read before the update (Batch::$totalJobs).
	TotalJobs int64
	// PendingJobs and FailedJobs are the counts after the update.
	PendingJobs, FailedJobs int64
	Options                 BatchOptions
}

// BatchOptions is what the batch's options declare: whether failures are
// allowed and which callback lists are not empty.
type BatchOptions struct {
	AllowFailures bool
	// Then, Catch, Finally, Progress (10.37.2+) and Failure (12.32+) are
	// true when that callback list is not empty.
	Then, Catch, Finally, Progress, Failure bool
}

// ReadBatchOptions reads job_batches.options: the PHP serialize() of the
// PendingBatch options (already base64-decoded on PostgreSQL). The
// callbacks themselves are signed closures only PHP can run; this reads
// only which lists are there.
func ReadBatchOptions(serialized []byte) (BatchOptions, error) {
	var o BatchOptions
	v, err := phpserialize.Unserialize(serialized)
	if err != nil {
		return o, err
	}
	if v.Kind != phpserialize.KindArray {
		return o, errors.New("bridgeproto: batch options are not a PHP array")
	}
	for _, e := range v.Entries {
		val := e.Value.Deref()
		nonEmpty := val.Kind == phpserialize.KindArray && len(val.Entries) > 0
		switch e.Key.String() {
		case "allowFailures":
			o.AllowFailures = val.Kind == phpserialize.KindBool && val.Bool
		case "then":
			o.Then = nonEmpty
		case "catch":
			o.Catch = nonEmpty
		case "finally":
			o.Finally = nonEmpty
		case "progress":
			o.Progress = nonEmpty
		case "failure":
			o.Failure = nonEmpty
		}
	}
	return o, nil
}

// AfterSuccess names what Batch::recordSuccessfulJob runs, on the app's
// Laravel version, after the decrement that left s: BatchStarted on the
// first processed job (13.3+), progress callbacks (10.37.2+), BatchFinished
// (12.48+) and then callbacks when nothing is pending, finally callbacks
// when pending equals failed. Nil when nothing is to run; in
// AfterSuccessOrder otherwise.
func AfterSuccess(version string, s BatchState) ([]string, error) {
	if err := checkVersion(version); err != nil {
		return nil, err
	}
	var out []string
	if atLeast(version, "13.3") && s.firstProcessed() {
		out = append(out, "started")
	}
	if atLeast(version, "10.37.2") && s.Options.Progress {
		out = append(out, "progress")
	}
	if atLeast(version, "12.48") && s.PendingJobs == 0 {
		out = append(out, "finished")
	}
	if s.PendingJobs == 0 && s.Options.Then {
		out = append(out, "then")
	}
	if s.allRanOnce() && s.Options.Finally {
		out = append(out, "finally")
	}
	return out, nil
}

// AfterFailure names what Batch::recordFailedJob runs after the increment
// that left s: BatchStarted (13.3+), BatchCanceled on the first failure
// without allowFailures (12.51+; the cancel itself, cancelled_at and
// finished_at, is the worker's write), progress (10.37.2+) and failure
// (12.32+) callbacks with allowFailures, catch callbacks on the first
// failure, finally callbacks when pending equals failed.
func AfterFailure(version string, s BatchState) ([]string, error) {
	if err := checkVersion(version); err != nil {
		return nil, err
	}
	var out []string
	if atLeast(version, "13.3") && s.firstProcessed() {
		out = append(out, "started")
	}
	if atLeast(version, "12.51") && s.FailedJobs == 1 && !s.Options.AllowFailures {
		out = append(out, "canceled")
	}
	if s.Options.AllowFailures && atLeast(version, "10.37.2") && s.Options.Progress {
		out = append(out, "progress")
	}
	if s.Options.AllowFailures && atLeast(version, "12.32") && s.Options.Failure {
		out = append(out, "failure")
	}
	if s.FailedJobs == 1 && s.Options.Catch {
		out = append(out, "catch")
	}
	if s.allRanOnce() && s.Options.Finally {
		out = append(out, "finally")
	}
	return out, nil
}

// firstProcessed is Batch::isFirstJobProcessed (13.3+).
func (s BatchState) firstProcessed() bool {
	return s.TotalJobs-s.PendingJobs+s.FailedJobs == 1
}

// allRanOnce is UpdatedBatchJobCounts::allJobsHaveRanExactlyOnce.
func (s BatchState) allRanOnce() bool {
	return s.PendingJobs-s.FailedJobs == 0
}
