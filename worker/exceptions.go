package worker

import (
	"github.com/laraworker/laraworker/worker/internal/maxexceptions"
	"github.com/laraworker/laraworker/worker/internal/phpexception"
)

// PHP exception classes Laravel writes into failed_jobs for these cases.
const (
	MaxAttemptsExceededClass = phpexception.MaxAttemptsExceededClass
	TimeoutExceededClass     = phpexception.TimeoutExceededClass
	ManuallyFailedClass      = phpexception.ManuallyFailedClass
)

// PHPException is an error with the PHP class name failed_jobs should show
// (Laravel's own exceptions, or a handler's choice).
type PHPException = phpexception.Exception

// frame is one line of a stack trace.
type frame = phpexception.Frame

// ExceptionCounter stores maxExceptions counters by job uuid, as
// Laravel's `job-exceptions:<uuid>` cache keys do.
type ExceptionCounter = maxexceptions.Counter

// CacheCounter keeps the counters in the app's database cache store, under
// the keys PHP workers use, so PHP and Go count the same exceptions.
type CacheCounter = maxexceptions.CacheCounter
