package jobqueue

import "errors"

// ErrReservationLost means the job is no longer held under the reservation
// the write was made for: after retry_after another worker (PHP's or
// Go's) reclaimed the job, and may have finished it. Nothing was written;
// the outcome belongs to the other worker now.
var ErrReservationLost = errors.New("jobqueue: the job's reservation was lost (another worker reclaimed it after retry_after)")

// Errors that come from the app's setup rather than from a job or a
// passing fault: stores wrap the driver's error with one of these, so a
// worker can stop burning jobs and say what to fix.
var (
	// ErrMissingTable: a queue table (or one of its columns) does not
	// exist.
	ErrMissingTable = errors.New("jobqueue: a queue table or column is missing")
	// ErrPermissionDenied: the database user may not read or write a
	// queue table.
	ErrPermissionDenied = errors.New("jobqueue: the database user lacks a permission on a queue table")
)

// ErrBatchNotFound is returned for an unknown batch id.
var ErrBatchNotFound = errors.New("jobqueue: batch not found")

// ErrJobNotFound is returned when no queued job matches.
var ErrJobNotFound = errors.New("jobqueue: job not found")

// ErrFailedJobNotFound is returned when no failed job matches.
var ErrFailedJobNotFound = errors.New("jobqueue: failed job not found")

// ErrNoUUID means a payload has no uuid, which the database-uuids failed
// job provider requires (Laravel raises an ErrorException).
var ErrNoUUID = errors.New("jobqueue: payload has no uuid")

// ErrNotSupported is what a store returns, wrapped with what was asked,
// from a method its backend cannot do (beanstalkd cannot clear a tube,
// SQS cannot read a queued job by id, a Redis job has no number to look
// it up by). Callers report it as the store's limit, not as a failure.
var ErrNotSupported = errors.New("jobqueue: not supported by this store")
