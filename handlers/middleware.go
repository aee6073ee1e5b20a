package handlers

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// PanicError is a handler panic turned into a job exception; Stack is the
// goroutine's stack at the panic.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Recover turns a panic in the handler into a *PanicError, so one bad job
// never takes the worker down.
func Recover() Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, job *Job) (err error) {
			defer func() {
				if v := recover(); v != nil {
					err = &PanicError{Value: v, Stack: debug.Stack()}
				}
			}()
			return next.Handle(ctx, job)
		})
	}
}

// Logging logs each job's start at debug level and its end with duration
// and error.
func Logging(log zerolog.Logger) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, job *Job) error {
			start := time.Now()
			log.Debug().Str("uuid", job.UUID).Str("class", job.DisplayName).Str("queue", job.Queue).
				Int64("attempt", job.Attempts).Msg("processing")
			err := next.Handle(ctx, job)
			ev := log.Debug()
			if err != nil {
				ev = log.Warn().Err(err)
			}
			ev.Str("uuid", job.UUID).Str("class", job.DisplayName).Dur("duration", time.Since(start)).Msg("handled")
			return err
		})
	}
}

// Metrics records each handler run in a Prometheus histogram,
// laraworker_handler_duration_seconds{class, result} (result "ok" or
// "error"): the handler's own time, where the worker's
// laraworker_job_duration_seconds also counts the database writes.
func Metrics(reg prometheus.Registerer) Middleware {
	hist := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "laraworker_handler_duration_seconds",
		Help:    "Time spent in job handlers, by class and result.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	}, []string{"class", "result"})
	reg.MustRegister(hist)
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, job *Job) error {
			start := time.Now()
			err := next.Handle(ctx, job)
			result := "ok"
			if err != nil {
				result = "error"
			}
			hist.WithLabelValues(job.DisplayName, result).Observe(time.Since(start).Seconds())
			return err
		})
	}
}
