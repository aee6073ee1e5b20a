// Package worker runs Laravel queue jobs with Go handlers: it claims rows
// from the jobs table, applies Laravel's attempt, backoff, timeout and
// failure rules, and writes each outcome back as Laravel would.
package worker

import (
	"errors"
	"strings"
	"time"
)

// Options are `php artisan queue:work`'s options (same names, same
// defaults) plus the ones concurrency needs.
type Options struct {
	// Queues in strict priority order (--queue=high,default); empty means
	// the connection's default queue. Names are not trimmed, as in Laravel.
	Queues []string
	// Name is --name, shown in logs.
	Name string
	// Sleep is how long to wait when no job is available (--sleep=3).
	Sleep time.Duration
	// Rest is the pause after each claim that found jobs (--rest=0).
	Rest time.Duration
	// Once runs a single job (--once).
	Once bool
	// StopWhenEmpty stops when the queues are empty (--stop-when-empty).
	StopWhenEmpty bool
	// MaxJobs stops after this many jobs (--max-jobs, 0 = no limit).
	MaxJobs int
	// MaxTime stops after this long (--max-time, 0 = no limit).
	MaxTime time.Duration
	// MemoryMB stops with exit status 12 when RSS reaches it (--memory=128,
	// 0 disables the check as Laravel 12.54+ does).
	MemoryMB int
	// Timeout applies when the payload has none (--timeout=60, 0 = none).
	Timeout time.Duration
	// Tries applies when the payload has no maxTries (--tries=1, 0 =
	// unlimited).
	Tries int
	// Backoff is --backoff: seconds, or Laravel's "1,5,10" list.
	Backoff string

	// Concurrency is how many jobs run at once (--concurrency=10).
	Concurrency int
	// Grace is how long running jobs may finish after a stop signal
	// (--grace); after it their contexts are cancelled and what still runs
	// is released.
	Grace time.Duration
	// LaravelExact claims one job per transaction and deletes each job on
	// its own, running exactly the statements Laravel runs.
	LaravelExact bool
	// Unrouted is what to do with jobs no handler is registered for:
	// "skip" (never reserve them; the default) or "fail".
	Unrouted string
	// LeaseEvery is how often running jobs' reservations are refreshed;
	// 0 means a third of retry_after.
	LeaseEvery time.Duration
	// Abandon is how long a handler that ignores its cancelled context is
	// waited for before it is abandoned and its job decided without it.
	Abandon time.Duration
	// LaravelVersion is the app's Laravel version (e.g. "8.83"); it only
	// picks the exception texts written to failed_jobs. Empty means 10.10+.
	LaravelVersion string
	// MaxExceptionsCache holds maxExceptions counters; nil means the app's
	// database cache store when it has one (shared with PHP workers), else
	// this process's memory.
	MaxExceptionsCache ExceptionCounter
}

// Unrouted policies.
const (
	UnroutedSkip = "skip"
	UnroutedFail = "fail"
)

// DefaultOptions are artisan's defaults plus laraworker's.
func DefaultOptions() Options {
	return Options{
		Name:        "default",
		Sleep:       3 * time.Second,
		MemoryMB:    128,
		Timeout:     60 * time.Second,
		Tries:       1,
		Backoff:     "0",
		Concurrency: 10,
		Grace:       30 * time.Second,
		Unrouted:    UnroutedSkip,
		Abandon:     5 * time.Second,
	}
}

// ParseQueues splits --queue like Worker::getNextJob: on commas, untrimmed.
func ParseQueues(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (o Options) validate() error {
	switch {
	case o.Concurrency < 1:
		return errors.New("worker: --concurrency must be at least 1")
	case o.Tries < 0:
		return errors.New("worker: --tries must be 0 (unlimited) or more")
	case o.Unrouted != UnroutedSkip && o.Unrouted != UnroutedFail:
		return errors.New(`worker: --unrouted must be "skip" or "fail"`)
	}
	return nil
}
