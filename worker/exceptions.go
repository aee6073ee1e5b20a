package worker

import (
	"context"

	"github.com/laraworker/laraworker/worker/internal/phpexception"
)

// frame is one line of a stack trace.
type frame = phpexception.Frame

// ExceptionCounter stores maxExceptions counters by job uuid, as
// Laravel's `job-exceptions:<uuid>` cache keys do. Without one
// (Config.Exceptions nil) the counters live in Config.Cache, under the
// keys PHP workers use, so PHP and Go count the same exceptions.
type ExceptionCounter interface {
	// Increment adds one and returns the new count.
	Increment(ctx context.Context, uuid string) (int64, error)
	// Forget drops the counter.
	Forget(ctx context.Context, uuid string) error
}
