package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/payload"
)

// verdict is what happens to a job row once its run is decided.
type verdict int

const (
	verdictDelete    verdict = iota // success: delete (after chain and batch)
	verdictRelease                  // put back with a delay
	verdictFail                     // move to failed_jobs
	verdictUnreserve                // not ours to run: restore the row as it was
	verdictSkip                     // decided elsewhere (abandoned and released)
	// cut short by shutdown: given back with its attempt restored, within
	// a bound (interrupted.go)
	verdictInterrupted
)

// outcome is a decided job: the verdict and what it needs.
type outcome struct {
	verdict verdict
	delay   time.Duration
	err     error
	where   frame
	// success work, done before the delete as CallQueuedHandler does
	job     *handlers.Job
	batchID string
	reason  string // for logs and metrics
	// abandoned: the handler ignored the cancellation (verdictInterrupted)
	abandoned bool
}

// running is a job in flight.
type running struct {
	started time.Time
	// cancel ends the job's context: at shutdown, or when its reservation
	// turns out lost (another worker runs the job now).
	cancel context.CancelCauseFunc
	// decided tells the worker the handler is done with (the outcome may
	// still be being written); safe to call more than once.
	decided func()

	// mu guards the fields below. The lease refresh holds it across its
	// write, so an outcome is never written with a token the refresh is
	// replacing.
	mu sync.Mutex
	// row is the claimed row; row.ReservedAt is the current reservation
	// token (the claim's, or the last refresh's).
	row jobqueue.JobRow
	// settled is set by whoever writes the outcome first: the job itself,
	// or shutdown releasing it after its handler was abandoned.
	settled bool
	// lost: a refresh found the job reserved by another worker.
	lost bool
}

// errReservationLost is the cause given to a job's context when a refresh
// finds its reservation taken.
var errReservationLost = errors.New("worker: the job's reservation was lost: another worker took it after retry_after")

// take claims the right to write the job's outcome and returns the row
// with its current token; false when the outcome was already written
// (released at shutdown) or the reservation was lost.
func (r *running) take() (jobqueue.JobRow, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.settled || r.lost {
		return jobqueue.JobRow{}, false
	}
	r.settled = true
	return r.row, true
}

// current is the row with its current token.
func (r *running) current() jobqueue.JobRow {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.row
}

type runningSet struct {
	mu sync.Mutex
	m  map[int64]*running
}

func (s *runningSet) add(row jobqueue.JobRow, now time.Time, cancel context.CancelCauseFunc, decided func()) *running {
	r := &running{row: row, started: now, cancel: cancel, decided: decided}
	s.mu.Lock()
	s.m[row.ID] = r
	s.mu.Unlock()
	return r
}

func (s *runningSet) remove(id int64) {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

func (s *runningSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// olderThan lists the jobs running for at least d.
func (s *runningSet) olderThan(d time.Duration, now time.Time) []*running {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*running
	for _, r := range s.m {
		if now.Sub(r.started) >= d {
			out = append(out, r)
		}
	}
	return out
}

func (s *runningSet) all() []*running {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*running, 0, len(s.m))
	for _, r := range s.m {
		out = append(out, r)
	}
	return out
}

// process runs one claimed row to its outcome and writes it. ctx is the
// job's own context (r.cancel ends it).
func (w *Worker) process(ctx context.Context, r *running) {
	row := r.current()
	defer w.running.remove(row.ID)
	defer r.cancel(nil)
	defer r.decided()
	started := time.Now()
	p, err := payload.Parse(row.Payload)
	if err != nil {
		r.decided()
		w.log.Warn().Err(err).Int64("id", row.ID).Str("queue", row.Queue).Msg("job payload is not valid; failing it")
		w.settle(r, nil, outcome{verdict: verdictFail, err: invalidPayload(err), reason: "invalid_payload"})
		return
	}
	w.log.Debug().Str("uuid", p.UUID).Int64("id", row.ID).Str("class", p.Name()).Str("queue", row.Queue).
		Int("attempt", row.Attempts).Msg("job started")
	out := w.decide(ctx, row, p)
	r.decided()
	// As CallQueuedHandler: the unique lock goes before the job's row.
	w.releaseAfter(ctx, p, out)
	if w.settle(r, p, out) {
		w.logOutcome(row, p, out, time.Since(started))
	}
}

// invalidPayload is Laravel's InvalidPayloadException, for rows Go cannot
// even parse (PHP would fail on them too).
func invalidPayload(err error) error {
	return &PHPException{Class: `Illuminate\Queue\InvalidPayloadException`, Message: "Unable to decode the job payload: " + err.Error()}
}

// decide applies Laravel's rules around one run of the handler.
func (w *Worker) decide(ctx context.Context, row jobqueue.JobRow, p *payload.Payload) outcome {
	now := w.now()
	name := p.Name()
	attempts := int64(row.Attempts)
	if w.cfg.alreadyExceeded(p, attempts, now) {
		return outcome{verdict: verdictFail, err: maxAttemptsExceeded(name, w.legacyTexts), reason: "max_attempts"}
	}
	h, err := w.reg.Lookup(p.DisplayName)
	if err != nil {
		return w.unrouted(p)
	}
	job := handlers.NewJob(row.ID, row.Queue, attempts, p, handlers.Env{Encrypter: w.cfg.Encrypter, Logger: w.log, App: w.cfg.App}, w.jobOption(p))
	if p.Data.Command != "" {
		cmd, err := job.Command()
		if err != nil {
			if w.isKeyProblem(err) {
				return w.keyProblem(p, err)
			}
			// Decoding is deterministic: retrying cannot help.
			return outcome{verdict: verdictFail, reason: "undecodable", err: &PHPException{
				Class: `LaraWorker\InvalidCommandException`, Message: fmt.Sprintf("cannot decode the command of %s: %v", name, err)}}
		}
		if cmd.Encrypted {
			w.keyWorks()
		}
	}
	batchID := w.batchID(job)
	if batchID != "" {
		if out, stop := w.checkBatch(ctx, batchID, job); stop {
			return out
		}
	}
	return w.runClass(ctx, h, job, batchID)
}

// keyProblem gives back a job whose command this worker cannot decrypt
// (no APP_KEY, or not the one that encrypted it) and stops claiming its
// class: PHP workers with the right key run it; failing it would empty a
// whole class into failed_jobs because of one bad deploy.
func (w *Worker) keyProblem(p *payload.Payload, err error) outcome {
	class, ok := w.reg.Route(p.DisplayName)
	if !ok {
		class = p.Name()
	}
	w.configProblem(&ConfigError{Kind: kindAppKey, Class: class, Err: err})
	return outcome{verdict: verdictUnreserve, reason: "config_error"}
}

// unrouted handles a job no handler is registered for (possible when the
// claim's LIKE matched case-insensitively, or with --unrouted=fail).
func (w *Worker) unrouted(p *payload.Payload) outcome {
	if w.cfg.Unrouted == UnroutedFail {
		return outcome{verdict: verdictFail, reason: "unrouted", err: &PHPException{
			Class:   `LaraWorker\NoHandlerException`,
			Message: fmt.Sprintf("No Go handler is registered for job class [%s] and the worker runs with --unrouted=fail.", p.Name()),
		}}
	}
	return outcome{verdict: verdictUnreserve, reason: "unrouted"}
}

// run calls the handler under the job's timeout and turns its result into
// an outcome with Laravel's exception rules.
func (w *Worker) run(ctx context.Context, h handlers.Handler, job *handlers.Job, batchID string) outcome {
	p := job.Payload
	timeout := w.cfg.timeout(p)
	runCtx, cancel := jobContext(ctx, timeout)
	defer cancel()
	err, abandoned := w.call(runCtx, h, job)
	where := handlerFrame(w.reg.Origin(job.DisplayName))
	timedOut := timeout > 0 && errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	if abandoned {
		w.log.Error().Str("uuid", job.UUID).Str("class", job.DisplayName).Msg("handler ignored cancellation; abandoned")
	}
	switch {
	case timedOut:
		return w.onTimeout(job, where)
	case ctx.Err() != nil && (err != nil || abandoned):
		// Shutdown cut the run short: not the job's fault, run it again
		// with its attempt restored.
		return outcome{verdict: verdictInterrupted, reason: "interrupted", abandoned: abandoned}
	}
	if d := job.Decision(); d.Action != handlers.ActionNone {
		return w.onDecision(job, d, where, batchID)
	}
	if err == nil {
		return outcome{verdict: verdictDelete, job: job, batchID: batchID, reason: "done"}
	}
	var rel *handlers.ReleaseError
	if errors.As(err, &rel) {
		delay := rel.Delay
		if rel.UseBackoff {
			delay = w.cfg.backoff(p, job.Attempts)
		}
		return outcome{verdict: verdictRelease, delay: delay, reason: "released"}
	}
	if errors.Is(err, handlers.ErrModelNotFound) {
		return w.modelMissing(job, err)
	}
	return w.onException(job, err, where, batchID)
}

// jobContext is the context one run gets: ctx with the job's timeout, if
// any. Exactly one child of ctx is made, and its cancel is the one
// returned: a child whose cancel is lost stays registered in the
// long-lived ctx for the life of the worker (112 bytes a job measured,
// docs/PERFORMANCE.md "Memory over a million jobs").
func jobContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

// call runs the handler; if it ignores a cancelled context for longer than
// Abandon, call returns without it (abandoned = true).
func (w *Worker) call(ctx context.Context, h handlers.Handler, job *handlers.Job) (err error, abandoned bool) {
	done := make(chan error, 1)
	go func() { done <- safeHandle(ctx, h, job) }()
	select {
	case err = <-done:
		return err, false
	case <-ctx.Done():
	}
	t := time.NewTimer(w.cfg.Abandon)
	defer t.Stop()
	select {
	case err = <-done:
		return err, false
	case <-t.C:
		return ctx.Err(), true
	}
}

// safeHandle recovers panics even when no Recover middleware is installed.
func safeHandle(ctx context.Context, h handlers.Handler, job *handlers.Job) (err error) {
	return handlers.Recover()(h).Handle(ctx, job)
}

// onDecision honours Release, Fail and Delete called by the handler.
func (w *Worker) onDecision(job *handlers.Job, d handlers.Decision, where frame, batchID string) outcome {
	switch d.Action {
	case handlers.ActionRelease:
		return outcome{verdict: verdictRelease, delay: d.Delay, reason: "released"}
	case handlers.ActionFail:
		err := d.Err
		if err == nil {
			err = &PHPException{Class: ManuallyFailedClass}
		}
		return outcome{verdict: verdictFail, err: err, where: where, batchID: batchID, reason: "failed"}
	}
	return outcome{verdict: verdictDelete, job: job, batchID: batchID, reason: "done"}
}

// onException is handleJobException: fail when this was the last attempt
// or maxExceptions is reached, else release with backoff.
func (w *Worker) onException(job *handlers.Job, err error, where frame, batchID string) outcome {
	p := job.Payload
	if w.cfg.willExceed(p, job.Attempts, w.now()) || w.exceedsMaxExceptions(context.Background(), p) {
		return outcome{verdict: verdictFail, err: err, where: where, batchID: batchID, reason: "failed"}
	}
	return outcome{verdict: verdictRelease, delay: w.cfg.backoff(p, job.Attempts), err: err, reason: "released_after_exception"}
}

// onTimeout is the timeout path: TimeoutExceededException fails the job
// when it was the last attempt, maxExceptions is reached or failOnTimeout
// is set; otherwise the job is released (Laravel leaves it reserved until
// retry_after; releasing with backoff runs it again sooner, same attempts).
func (w *Worker) onTimeout(job *handlers.Job, where frame) outcome {
	p := job.Payload
	err := timeoutExceeded(p.Name(), w.legacyTexts)
	if w.cfg.willExceed(p, job.Attempts, w.now()) || w.exceedsMaxExceptions(context.Background(), p) || p.FailOnTimeout {
		return outcome{verdict: verdictFail, err: err, where: where, reason: "timed_out"}
	}
	return outcome{verdict: verdictRelease, delay: w.cfg.backoff(p, job.Attempts), err: err, reason: "timed_out"}
}
