package worker

import (
	"context"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
)

// JobObserver is told when each job the worker takes up starts and how its
// run ended, with the events Laravel's worker would have raised for it:
// what Laravel Pulse's recorders, a tracer or a runtime estimate need to
// see Go's work as they see PHP's. Both calls are made on the job's own
// goroutine, so they must be quick (buffer, do not write); an observer
// serves every job of the worker, concurrently.
type JobObserver interface {
	// JobStarted is called once the job's payload is parsed (or found not
	// to be valid), before anything runs: Laravel's JobProcessing. The
	// context it returns is the job's from then on: the handler and
	// JobEnded get it (a tracer puts its span there). Return ctx when
	// there is nothing to add.
	JobStarted(ctx context.Context, job JobInfo) context.Context
	// JobEnded is called when the job's run ended and its outcome was
	// handed over to be written (end.Written says whether it was this
	// run's to write).
	JobEnded(ctx context.Context, job JobInfo, end JobEnd)
}

// JobInfo is the job an observer is told about.
type JobInfo struct {
	// Connection is the queue connection's name (the store's), as
	// Laravel's Job::getConnectionName gives it.
	Connection string
	// Queue is the queue the job was claimed from (Job::getQueue).
	Queue string
	// ID is the job's id in its store (see jobqueue.JobRow.ID).
	ID int64
	// Attempt is this attempt's number (1 on the first run).
	Attempt int
	// Payload is the parsed payload; nil when it could not be parsed (the
	// job is then failed as invalid).
	Payload *payload.Payload
	// Started is when the worker took the job up.
	Started time.Time
}

// Name is the job's name as Laravel's Job::resolveName gives it: the
// payload's displayName, else its job; "" for a payload that could not be
// parsed.
func (j JobInfo) Name() string {
	if j.Payload == nil {
		return ""
	}
	return j.Payload.Name()
}

// UUID is the payload's uuid ("" when it could not be parsed).
func (j JobInfo) UUID() string {
	if j.Payload == nil {
		return ""
	}
	return j.Payload.UUID
}

// JobEnd is how a job's run ended.
type JobEnd struct {
	// Ended is when the outcome was decided.
	Ended time.Time
	// Outcome is what becomes of the job: done (deleted), failed, released
	// (run again later, including a run cut short at shutdown) or returned
	// (given back untouched: not this worker's to run).
	Outcome jobqueue.Outcome
	// Reason is the outcome label of laraworker_jobs_total ("done",
	// "released_after_exception", "max_attempts", "interrupted"...).
	Reason string
	// Delay is a release's delay.
	Delay time.Duration
	// Err is the error the run ended with: the exception of a failure,
	// of a release after an exception or a timeout; nil otherwise.
	Err error
	// Events are the queue events Laravel's worker would have raised for
	// this run.
	Events JobEvents
	// Queued are the jobs the run pushed with its outcome (the next link
	// of its chain), for which Laravel raises JobQueued.
	Queued []QueuedJob
	// Written is false when the outcome was not this run's to write: a
	// lease refresh found the job taken by another worker after
	// retry_after, or shutdown gave it back after its handler was
	// abandoned.
	Written bool
}

// QueuedJob is a job a run pushed.
type QueuedJob struct {
	// Queue is the queue it was pushed to; "" is the connection's default
	// queue (queue.connections.<name>.queue).
	Queue   string
	Payload *payload.Payload
}

// JobEvents are the queue events Laravel's Worker::process raises for one
// run (Illuminate\Queue\Events\...), so that what listens to them in PHP
// can count Go's runs the same way.
type JobEvents struct {
	// Processing: JobProcessing, raised for every job the worker runs;
	// not for a job given back untouched (PHP never saw it).
	Processing bool
	// Processed: JobProcessed, raised when the job's fire() returned: it
	// succeeded, or the job (or its middleware) released, deleted or
	// failed it itself, or a model was missing. Not when an exception
	// escaped, the job failed before running (too many attempts), timed
	// out, or a stop cut it short.
	Processed bool
	// ReleasedAfterException: JobReleasedAfterException, a release by
	// Laravel's exception rules (not a release the job asked for, nor
	// Go's early release of a job that timed out, which PHP leaves
	// reserved).
	ReleasedAfterException bool
	// Failed: JobFailed, whatever failed the job.
	Failed bool
}

// returnedReasons are the outcomes of a run whose fire() returned in PHP:
// the handler (or a middleware, or CallQueuedHandler itself) decided
// without throwing, so Worker::process raises JobProcessed after it.
var returnedReasons = map[string]bool{
	"done": true, "released": true, "batch_cancelled": true, reasonModelMissingDeleted: true, reasonModelMissing: true,
	reasonMiddlewareStopped: true, reasonMiddlewareReleased: true, reasonThrottled: true,
}

// events are the queue events PHP would have raised for an outcome.
func (o outcome) events() JobEvents {
	switch o.verdict {
	case verdictUnreserve:
		return JobEvents{}
	case verdictInterrupted:
		return JobEvents{Processing: true}
	}
	ev := JobEvents{Processing: true, Failed: o.verdict == verdictFail}
	if returnedReasons[o.reason] || o.failedByHandler {
		ev.Processed = true
		return ev
	}
	// An exception escaped fire(), or the job failed before it ran:
	// Laravel's exception rules released or failed it. A timeout kills
	// PHP's worker, which raises no release.
	ev.ReleasedAfterException = o.verdict == verdictRelease && o.reason != reasonTimedOut
	return ev
}

// observeStart tells the observers the job started; their context becomes
// the job's.
func (e *jobExecutor) observeStart(row jobqueue.JobRow, p *payload.Payload) {
	if len(e.cfg.Observers) == 0 {
		return
	}
	e.info = JobInfo{Connection: e.connection(), Queue: row.Queue, ID: row.ID, Attempt: row.Attempts, Payload: p, Started: e.started}
	for _, o := range e.cfg.Observers {
		e.ctx = o.JobStarted(e.ctx, e.info)
	}
}

// observeEnd tells the observers how the run ended.
func (e *jobExecutor) observeEnd(out outcome, written bool) {
	if len(e.cfg.Observers) == 0 {
		return
	}
	end := JobEnd{Ended: e.clock.Now(), Reason: out.reason, Delay: out.delay, Err: out.err, Events: out.events(), Written: written}
	end.Outcome, _ = outcomeOf(out.verdict)
	if e.queued != nil {
		if p, err := payload.Parse(e.queued.Payload); err == nil {
			end.Queued = []QueuedJob{{Queue: e.queued.Queue, Payload: p}}
		}
	}
	if out.verdict == verdictInterrupted {
		end.Outcome = jobqueue.OutcomeReleased
	}
	for _, o := range e.cfg.Observers {
		o.JobEnded(e.ctx, e.info, end)
	}
}
