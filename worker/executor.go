package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/worker/internal/batchlookup"
	"github.com/laraworker/laraworker/worker/internal/bridgehooks"
	"github.com/laraworker/laraworker/worker/internal/configproblem"
	"github.com/laraworker/laraworker/worker/internal/jobmiddleware"
	"github.com/laraworker/laraworker/worker/internal/jobtrace"
	"github.com/laraworker/laraworker/worker/internal/maxexceptions"
	"github.com/laraworker/laraworker/worker/internal/onceset"
	"github.com/laraworker/laraworker/worker/internal/phpexception"
	"github.com/laraworker/laraworker/worker/internal/uniquelock"
	"github.com/rs/zerolog"
)

// One job's path: the producer (producer.go) claims the row and
// dispatches it to a jobExecutor, which runs it here to its outcome (the
// rules of Laravel's Worker and CallQueuedHandler around one run of the
// handler) and hands that to the completer (completer.go), which writes
// it.

// executorDeps is what every job's executor is built from: shared by all
// jobs, and knowing nothing of the producer that feeds them.
type executorDeps struct {
	cfg       *Config
	reg       *handlers.Registry
	log       zerolog.Logger
	clock     clock.Clock
	completer *completer
	inflight  *inFlight
	// problems records configuration problems (a key that cannot decrypt);
	// the producer stops claiming what they block.
	problems *configproblem.Problems
	// skip remembers the rows given back to PHP; the producer's claims
	// exclude them.
	skip       *skipSet
	unique     *uniquelock.Locks
	mw         *jobmiddleware.Resolver
	batches    *batchlookup.Lookup
	exceptions *maxexceptions.Counts
	// legacyTexts selects Laravel 8/9's exception texts.
	legacyTexts bool
	// connection is the store's connection name, for chain links.
	connection func() string
	// hooks builds the bridge's hook jobs of outcomes (bridge.go).
	hooks *bridgehooks.Builder
	// notes remembers what was said once per class.
	notes *onceset.Set
	// stats counts the jobs cut short by shutdown.
	stats *counters
	// tracer traces job attempts (trace.go); nil: tracing is off.
	tracer *jobtrace.Tracer
	// destination names a queue as the app's tracing names it.
	destination func(queue string) jobtrace.Destination
}

// jobExecutor runs one claimed job from its payload to its outcome, and
// owns the job's state for that time: the row and its reservation token,
// the parsed payload, the job as its handler sees it (whose command is
// decoded once, on first use, whoever asks), its class's declarations and
// the batch it belongs to. The producer makes one per claimed job; the
// lease refresher, Stats and shutdown reach it only through its row
// (current, take).
type jobExecutor struct {
	*executorDeps
	// ctx is the job's own context: it ends at shutdown (after Grace), or
	// when a lease refresh finds the reservation taken (cancel).
	ctx     context.Context
	cancel  context.CancelCauseFunc
	started time.Time

	// mu guards the fields below. The lease refresh holds it across its
	// write, so an outcome is never written with a token the refresh is
	// replacing.
	mu sync.Mutex
	// row is the claimed row; row.ReservedAt is the current reservation
	// token (the claim's, or the last refresh's).
	row jobqueue.JobRow
	// settled is set by whoever writes the outcome first: the executor,
	// or shutdown releasing the job after its handler was abandoned.
	settled bool
	// lost: a refresh found the job reserved by another worker.
	lost bool
	// parsed is the payload once parsed, for Stats and shutdown.
	parsed *payload.Payload

	// The executor's goroutine alone reads and writes the fields below.
	payload *payload.Payload
	job     *handlers.Job
	// handler is the job's handler with the registry's middleware; nil
	// when its class has none.
	handler    handlers.Handler
	batchID    string
	batchKnown bool
	decided    bool
	// plain: the job asks for none of Laravel's rules around its handler
	// (plain.go); set by decide.
	plain bool
	// classRules: the job's registration asks for one of Laravel's rules
	// around the handler (classAsksForRules); set by execute.
	classRules bool
	// meta is the payload's bridge record, once read (metadata()).
	metaRead bool
	meta     *bridgeproto.Metadata
	metaErr  error
	// info is the job as its observers are told about it, queued the next
	// link of its chain this run pushed (observer.go).
	info   JobInfo
	queued *jobqueue.PushItem
	// span is the attempt's span (trace.go); nil when tracing is off.
	span *jobtrace.Span
}

// verdict is what happens to a job row once its run is decided.
type verdict int

const (
	verdictDelete    verdict = iota // success: delete (after chain and batch)
	verdictRelease                  // put back with a delay
	verdictFail                     // move to failed_jobs
	verdictUnreserve                // not ours to run: restore the row as it was
	// cut short by shutdown: given back with its attempt restored, within
	// a bound (interrupted.go)
	verdictInterrupted
	// the handler threw: Laravel's exception rules (onException) decide,
	// once the middleware had their say (a ThrottlesExceptions catches
	// it). Never settled as such.
	verdictException
)

// outcome is a decided run: the verdict and what its write needs.
type outcome struct {
	verdict verdict
	delay   time.Duration
	err     error
	where   frame
	// inBatch: the outcome counts in the job's batch (a success with its
	// delete, a failure with its failed row), as CallQueuedHandler's
	// call() and failed() count it: not when PHP could not unserialize the
	// command (undecodable, or a model missing).
	inBatch bool
	reason  string // for logs and metrics
	// abandoned: the handler ignored the cancellation and still runs
	// (verdictInterrupted, or a timeout)
	abandoned bool
	// noHooks: a failure whose hook job is not pushed (tooLarge: it would
	// carry the payload again).
	noHooks bool
	// failedByHandler: the handler failed the job itself (PHP's
	// $this->fail()), so its fire() returned (observer.go).
	failedByHandler bool
}

// Outcome reasons of the missing-model path, and of a timeout.
const (
	reasonModelMissing        = "model_missing"
	reasonModelMissingDeleted = "model_missing_deleted"
	reasonTimedOut            = "timed_out"
)

// modelMissing: handleModelNotFound decided it; PHP could not unserialize
// the command.
func (o outcome) modelMissing() bool {
	return o.reason == reasonModelMissing || o.reason == reasonModelMissingDeleted
}

// errReservationLost is the cause given to a job's context when a refresh
// finds its reservation taken.
var errReservationLost = errors.New("worker: the job's reservation was lost: another worker took it after retry_after")

// execute runs the job to its outcome and hands it to the completer.
func (e *jobExecutor) execute() {
	defer e.cancel(nil)
	defer e.markDecided()
	e.mu.Lock()
	row := e.row
	e.mu.Unlock()
	if limit := e.cfg.MemoryMB; limit > 0 && int64(len(row.Payload)) >= int64(limit)<<20 {
		out, p := e.tooLarge(row.Payload)
		e.payload = p
		e.markDecided()
		e.settle(out)
		return
	}
	p, err := payload.Parse(row.Payload)
	// Tracing and observers are off by default: their calls are skipped
	// then, not made to return at once.
	traced, observed := e.tracer != nil, len(e.cfg.Observers) > 0
	if traced {
		e.startSpan(row, p)
	}
	if err != nil {
		e.markDecided()
		e.observeStart(row, nil)
		e.log.Warn().Err(err).Int64("id", row.ID).Str("queue", row.Queue).Msg("job payload is not valid; failing it")
		out := outcome{verdict: verdictFail, err: invalidPayload(err), reason: "invalid_payload"}
		written := e.settle(out)
		e.endSpan(out, written)
		e.observeEnd(out, written)
		return
	}
	// The job its handler will see, with its registration's declarations
	// and the database its model checks use.
	e.payload = p
	h, class, _ := e.reg.Resolve(p.DisplayName)
	e.handler = h
	env := handlers.Env{Encrypter: e.cfg.Encrypter, Logger: e.log, App: e.cfg.App}
	// A class that declares nothing leaves the job's Class zero, as
	// WithClass would set it, without the option's closure (an allocation
	// and two calls per job of the plain path).
	e.classRules = classAsksForRules(class)
	if e.classRules || class.DeleteWhenMissingModels {
		e.job = handlers.NewJob(row.ID, row.Queue, int64(row.Attempts), p, env, handlers.WithClass(class, e.cfg.Models))
	} else {
		e.job = handlers.NewJob(row.ID, row.Queue, int64(row.Attempts), p, env)
	}
	e.mu.Lock()
	e.parsed = p
	e.mu.Unlock()
	if observed {
		e.observeStart(row, p)
	}
	if ev := e.log.Debug(); ev.Enabled() {
		ev = ev.Str("uuid", p.UUID).Int64("id", row.ID).Str("class", p.Name()).Str("queue", row.Queue).Int("attempt", row.Attempts)
		withContext(ev, e.job).Msg("job started")
	}
	out := e.decide()
	e.markDecided()
	// As CallQueuedHandler: the unique lock goes before the job's row (a
	// plain job has none).
	if !e.plain {
		e.releaseAfter(out)
	}
	written := e.settle(out)
	// The outcome is logged at info, a failure at warn: a logger that
	// drops both (the default's) costs no call.
	if written && e.log.GetLevel() <= zerolog.WarnLevel && zerolog.GlobalLevel() <= zerolog.WarnLevel {
		e.logOutcome(row, out)
	}
	if traced {
		e.endSpan(out, written)
	}
	if observed {
		e.observeEnd(out, written)
	}
}

// markDecided tells the producer the handler is done with the job (its
// outcome may still be being written); only the first call counts.
func (e *jobExecutor) markDecided() {
	if !e.decided {
		e.decided = true
		e.inflight.markDecided()
	}
}

// invalidPayload is Laravel's InvalidPayloadException, for rows Go cannot
// even parse (PHP would fail on them too).
func invalidPayload(err error) error {
	return &handlers.PHPException{Class: `Illuminate\Queue\InvalidPayloadException`, Message: "Unable to decode the job payload: " + err.Error()}
}

// decide applies Laravel's rules around one run of the handler: the
// attempts already made, the route, the command, the batch, the models.
func (e *jobExecutor) decide() outcome {
	p, job := e.payload, e.job
	if e.cfg.alreadyExceeded(p, job.Attempts, e.clock.Now()) {
		return outcome{verdict: verdictFail, err: phpexception.MaxAttemptsExceeded(p.Name(), e.legacyTexts), inBatch: true, reason: "max_attempts"}
	}
	h := e.handler
	if h == nil {
		return e.unrouted()
	}
	var cmd *payload.Command
	if p.Data.Command != "" {
		var err error
		cmd, err = job.Command()
		if err != nil {
			if e.problems.IsKeyProblem(err) {
				return e.keyProblem(err)
			}
			// Decoding is deterministic: retrying cannot help.
			return outcome{verdict: verdictFail, reason: "undecodable", err: &handlers.PHPException{
				Class: `LaraWorker\InvalidCommandException`, Message: fmt.Sprintf("cannot decode the command of %s: %v", p.Name(), err)}}
		}
		if cmd.Encrypted {
			e.problems.KeyWorks()
		}
	}
	if e.isPlain(cmd) {
		return e.runPlain(h)
	}
	if _, err := e.metadata(); err != nil {
		return e.unreadableRecord(err)
	}
	if e.batch() != "" {
		if out, stop := e.checkBatch(); stop {
			return out
		}
	}
	return e.runClass(h)
}

// reasonUnreadableRecord: the payload's bridge record cannot be read.
const reasonUnreadableRecord = "unreadable_bridge_record"

// unreadableRecord fails a job whose bridge record (the "laraworker"
// payload key) Go cannot read, with the cause: without the record Go would
// run the job without its job middleware, unique lock and models, and
// giving it back would leave it on a queue no PHP worker may serve (the
// bridge routes the class to Go's queue) and keep Go claiming it. Only
// this job is affected: the record is the job's, not the class's. The
// failure is not counted in the job's batch, so that its retry, once the
// cause is fixed, does not find the batch cancelled by it.
func (e *jobExecutor) unreadableRecord(err error) outcome {
	p := e.payload
	return outcome{verdict: verdictFail, reason: reasonUnreadableRecord, err: &handlers.PHPException{
		Class: `LaraWorker\UnreadableBridgeRecordException`,
		Message: fmt.Sprintf("Go cannot read the laraworker bridge's record of this %s job (%v), without which it would run the job "+
			"without its job middleware, unique lock and models. Fix the cause (a bridge newer than this laraworker: upgrade laraworker), "+
			"then retry the job: php artisan queue:retry %s", p.Name(), err, p.UUID)}}
}

// keyProblem gives back a job whose command this worker cannot decrypt
// (no APP_KEY, or not the one that encrypted it) and stops claiming its
// class: PHP workers with the right key run it; failing it would empty a
// whole class into failed_jobs because of one bad deploy.
func (e *jobExecutor) keyProblem(err error) outcome {
	class, ok := e.reg.Route(e.payload.DisplayName)
	if !ok {
		class = e.payload.Name()
	}
	e.problems.Report(&configproblem.Error{Kind: configproblem.KindAppKey, Class: class, Err: err})
	return outcome{verdict: verdictUnreserve, reason: "config_error"}
}

// unrouted handles a job no handler is registered for (possible when the
// claim's LIKE matched case-insensitively, or with --unrouted=fail). The
// bridge's hook jobs are always PHP's.
func (e *jobExecutor) unrouted() outcome {
	if e.cfg.Unrouted == UnroutedFail && !slices.Contains(bridgehooks.HookClasses, e.payload.DisplayName) {
		return outcome{verdict: verdictFail, inBatch: true, reason: "unrouted", err: &handlers.PHPException{
			Class:   `LaraWorker\NoHandlerException`,
			Message: fmt.Sprintf("No Go handler is registered for job class [%s] and the worker runs with --unrouted=fail.", e.payload.Name()),
		}}
	}
	return outcome{verdict: verdictUnreserve, reason: "unrouted"}
}

// batch is the id of the job's batch, "" when it is in none; read once.
func (e *jobExecutor) batch() string {
	if !e.batchKnown {
		e.batchID, e.batchKnown = batchIDOf(e.job), true
	}
	return e.batchID
}

// batchIDOf is data.batchId (12.51+) or the command's batchId property.
func batchIDOf(job *handlers.Job) string {
	if b := job.Payload.Data.BatchID; b != nil && *b != "" {
		return *b
	}
	cmd, err := job.Command()
	if err != nil || cmd == nil {
		return ""
	}
	if b := cmd.Queueable().BatchID; b != nil {
		return *b
	}
	return ""
}

// checkBatch leaves jobs of batches with PHP callbacks to PHP workers
// unless the bridge runs those callbacks (Go cannot run then/catch/finally
// closures), and deletes jobs of a cancelled batch without running them,
// counting them as PHP's `if ($this->batch()->cancelled()) return;` does.
func (e *jobExecutor) checkBatch() (outcome, bool) {
	if e.batches == nil {
		return outcome{}, false
	}
	b, info, err := e.batches.Find(e.ctx, e.batch())
	if errors.Is(err, jobqueue.ErrBatchNotFound) {
		return outcome{}, false
	}
	if err != nil {
		return outcome{verdict: verdictRelease, err: err, reason: "batch_lookup_failed"}, true
	}
	if info.Callbacks && !e.hooks.Batches {
		return outcome{verdict: verdictUnreserve, reason: "batch_has_php_callbacks"}, true
	}
	if b.Cancelled() {
		return outcome{verdict: verdictDelete, inBatch: true, reason: "batch_cancelled"}, true
	}
	return outcome{}, false
}

// runClass runs the job as CallQueuedHandler does around the handler: the
// command's models are looked up first (unserializing it in PHP does), a
// missing one takes Laravel's missing-model path; then the job's
// middleware run around the handler (middleware.go), and an
// UntilProcessing lock is released where the app's version does it; last,
// an exception nothing caught takes Laravel's exception rules. (A
// handler's own ErrModelNotFound is turned into the missing-model path by
// run, before them.)
func (e *jobExecutor) runClass(h handlers.Handler) outcome {
	if err := e.checkModels(); err != nil {
		if errors.Is(err, handlers.ErrModelNotFound) {
			return e.modelMissing(err)
		}
		// A lookup that failed (the database) is a job exception, as the
		// QueryException it would be in PHP.
		return e.onException(err, frame{File: "laraworker", Func: "CheckModels"})
	}
	if out, stop := e.debounce(); stop {
		return out
	}
	plan, out, ok := e.middlewarePlan()
	if !ok {
		return out
	}
	out = e.throughMiddleware(plan, h)
	if out.verdict == verdictException {
		return e.onException(out.err, out.where)
	}
	return out
}

// run calls the handler under the job's timeout and turns its result into
// an outcome with Laravel's exception rules.
func (e *jobExecutor) run(h handlers.Handler) outcome {
	job := e.job
	timeout := e.cfg.timeout(e.payload)
	// Exactly one child of e.ctx is made, and its cancel is the one
	// deferred: a child whose cancel is lost stays registered in the
	// long-lived context for the life of the worker (112 bytes a job
	// measured, docs/PERFORMANCE.md "Memory over a million jobs").
	var runCtx context.Context
	var cancel context.CancelFunc
	if timeout > 0 {
		runCtx, cancel = context.WithTimeout(e.ctx, timeout)
	} else {
		runCtx, cancel = context.WithCancel(e.ctx)
	}
	defer cancel()
	err, abandoned := e.call(runCtx, h)
	timedOut := timeout > 0 && errors.Is(runCtx.Err(), context.DeadlineExceeded) && e.ctx.Err() == nil
	if abandoned {
		e.log.Error().Str("uuid", job.UUID).Str("class", job.DisplayName).Msg("handler ignored cancellation; abandoned")
	}
	switch {
	case timedOut:
		out := e.onTimeout(e.handlerFrame())
		// A handler still running keeps what it holds (an overlap lock).
		out.abandoned = abandoned
		return out
	case e.ctx.Err() != nil && (err != nil || abandoned):
		// Shutdown cut the run short: not the job's fault, run it again
		// with its attempt restored.
		return outcome{verdict: verdictInterrupted, reason: "interrupted", abandoned: abandoned}
	}
	if d := job.Decision(); d.Action != handlers.ActionNone {
		return onDecision(d, e.handlerFrame)
	}
	if err == nil {
		return outcome{verdict: verdictDelete, inBatch: true, reason: "done"}
	}
	var rel *handlers.ReleaseError
	if errors.As(err, &rel) {
		delay := rel.Delay
		if rel.UseBackoff {
			delay = e.cfg.backoff(e.payload, job.Attempts)
		}
		return outcome{verdict: verdictRelease, delay: delay, reason: "released"}
	}
	if errors.Is(err, handlers.ErrModelNotFound) {
		return e.modelMissing(err)
	}
	return outcome{verdict: verdictException, err: err, where: e.handlerFrame()}
}

// handlerFrame locates the handler's code, for failures whose error
// carries no stack.
func (e *jobExecutor) handlerFrame() frame {
	return phpexception.HandlerFrame(e.reg.Origin(e.job.DisplayName))
}

// call runs the handler; if it ignores a cancelled context for longer than
// Abandon, call returns without it (abandoned = true).
func (e *jobExecutor) call(ctx context.Context, h handlers.Handler) (err error, abandoned bool) {
	done := make(chan error, 1)
	// A panic becomes the job's error, as handlers.Recover makes it, even
	// when the registry's middleware have no Recover.
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- &handlers.PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		done <- h.Handle(ctx, e.job)
	}()
	select {
	case err = <-done:
		return err, false
	case <-ctx.Done():
	}
	t := e.clock.NewTimer(e.cfg.Abandon)
	defer t.Stop()
	select {
	case err = <-done:
		return err, false
	case <-t.C():
		return ctx.Err(), true
	}
}

// onDecision honours Release, Fail and Delete called by the handler.
func onDecision(d handlers.Decision, where func() frame) outcome {
	switch d.Action {
	case handlers.ActionRelease:
		return outcome{verdict: verdictRelease, delay: d.Delay, reason: "released"}
	case handlers.ActionFail:
		err := d.Err
		if err == nil {
			err = &handlers.PHPException{Class: phpexception.ManuallyFailedClass}
		}
		return outcome{verdict: verdictFail, err: err, where: where(), inBatch: true, reason: "failed", failedByHandler: true}
	}
	return outcome{verdict: verdictDelete, inBatch: true, reason: "done"}
}

// onException is handleJobException: fail when this was the last attempt
// or maxExceptions is reached, else release with backoff.
func (e *jobExecutor) onException(err error, where frame) outcome {
	p, attempts := e.payload, e.job.Attempts
	if e.cfg.willExceed(p, attempts, e.clock.Now()) || e.exceptions.Exceeded(context.Background(), p) {
		return outcome{verdict: verdictFail, err: err, where: where, inBatch: true, reason: "failed"}
	}
	return outcome{verdict: verdictRelease, delay: e.cfg.backoff(p, attempts), err: err, reason: "released_after_exception"}
}

// onTimeout is the timeout path: TimeoutExceededException fails the job
// when it was the last attempt, maxExceptions is reached or failOnTimeout
// is set; otherwise the job is released (Laravel leaves it reserved until
// retry_after; releasing with backoff runs it again sooner, same attempts).
func (e *jobExecutor) onTimeout(where frame) outcome {
	p, attempts := e.payload, e.job.Attempts
	err := phpexception.TimeoutExceeded(p.Name(), e.legacyTexts)
	if e.cfg.willExceed(p, attempts, e.clock.Now()) || e.exceptions.Exceeded(context.Background(), p) || p.FailOnTimeout {
		return outcome{verdict: verdictFail, err: err, where: where, inBatch: true, reason: reasonTimedOut}
	}
	return outcome{verdict: verdictRelease, delay: e.cfg.backoff(p, attempts), err: err, reason: reasonTimedOut}
}

// ModelNotFoundClass is Laravel's exception for a job whose model is gone.
const ModelNotFoundClass = `Illuminate\Database\Eloquent\ModelNotFoundException`

// modelMissing is handleModelNotFound: delete without a failure when the
// job deletes when models are missing (the payload says so on 13, the
// bridge's record or the registration on 8-12), recording a batch success
// where the payload names its batch (12.51+); otherwise fail at once with
// ModelNotFoundException. The unique lock is released in releaseAfter,
// from the payload's context.
func (e *jobExecutor) modelMissing(err error) outcome {
	p := e.payload
	if e.deleteWhenMissingModels() {
		// The batch success is written with the delete (no chain link:
		// Laravel only deletes the job). Only the payload's batch: PHP
		// cannot unserialize the command to read its own.
		named := p.Data.BatchID != nil && *p.Data.BatchID != ""
		return outcome{verdict: verdictDelete, inBatch: named, reason: reasonModelMissingDeleted}
	}
	var mnf *handlers.ModelNotFoundError
	msg := err.Error()
	if errors.As(err, &mnf) {
		msg = mnf.Error()
	}
	return outcome{verdict: verdictFail, reason: reasonModelMissing, err: &handlers.PHPException{Class: ModelNotFoundClass, Message: msg},
		where: e.handlerFrame()}
}

// releaseBeforeRun is ShouldBeUniqueUntilProcessing: the lock goes just
// before the handler runs; on 13.24+ only on the first attempt or with
// the owner dispatch stored (a later attempt's lock may be another
// dispatch's by then).
func (e *jobExecutor) releaseBeforeRun() {
	if !e.untilProcessing() {
		return
	}
	cmd, err := e.job.Command()
	if err != nil {
		return
	}
	ref, ok := e.unique.LockOf(e.payload, cmd, e.job.Class(), e.recordedUnique())
	if !ok {
		return
	}
	if v := e.laravelVersion(); v != "" && appconfig.VersionCompare(v, "13.24") >= 0 && e.job.Attempts > 1 && ref.Owner == "" {
		return
	}
	e.unique.Release(e.ctx, e.payload, ref)
}

// releaseAfter releases the lock of a job whose outcome is decided, as
// CallQueuedHandler does: when it is done or has failed (a released job
// keeps it; an UntilProcessing one gave it up before running). A job whose
// model was missing releases only the lock its payload names (11.39+), as
// handleModelNotFound does; PHP cannot unserialize it to do more.
func (e *jobExecutor) releaseAfter(out outcome) {
	p := e.payload
	if p == nil || (out.verdict != verdictDelete && out.verdict != verdictFail) || out.reason == reasonDebounced {
		return
	}
	if out.modelMissing() {
		if ref, ok := e.unique.Named(p); ok {
			e.unique.Release(e.ctx, p, ref)
		}
		return
	}
	if e.untilProcessing() {
		return
	}
	class, recorded := e.job.Class(), e.recordedUnique()
	if _, named := e.unique.Named(p); !named && class.Unique == nil && recorded == nil {
		return // not unique, as far as Go can know: nothing to decode
	}
	cmd, err := e.job.Command()
	if err != nil {
		return // PHP's failed() cannot unserialize it either
	}
	if ref, ok := e.unique.LockOf(p, cmd, class, recorded); ok {
		e.unique.Release(e.ctx, p, ref)
	}
}

// settle hands the outcome to the completer once, with the job's current
// reservation token. It reports false, writing nothing, when the outcome
// is no longer this run's to write: the job was released at shutdown
// after its handler was abandoned, or a lease refresh found it taken by
// another worker.
func (e *jobExecutor) settle(out outcome) bool {
	row, ok := e.take()
	if !ok {
		return false
	}
	if e.cfg.Ran != nil {
		e.cfg.Ran(row, e.started, e.clock.Now().Sub(e.started))
	}
	switch out.verdict {
	case verdictDelete:
		e.finish(row, out)
	case verdictRelease:
		e.completer.release(row, out.delay)
	case verdictFail:
		e.fail(row, out)
	case verdictUnreserve:
		e.skip.add(row.ID, e.clock.Now())
		e.completer.unreserve(row)
	case verdictInterrupted:
		e.interrupted(row, e.payload, out.abandoned)
	}
	if e.cfg.Metrics != nil { // the class label costs a registry lookup
		e.cfg.Metrics.jobDone(row.Queue, e.metricsClass(e.payload), out.reason, e.clock.Now().Sub(e.started))
	}
	return true
}

// finish is CallQueuedHandler's success path: push the next link of a
// chain, record the batch success, delete the row. A job with neither
// joins the grouped delete; one with a followup is finished in one write
// (all three or none), so a link is never pushed and a batch never
// counted for a job whose reservation was lost, nor twice.
func (e *jobExecutor) finish(row jobqueue.JobRow, out outcome) {
	var f jobqueue.Followup
	if !e.plain && !out.modelMissing() && out.reason != reasonDebounced {
		f.Next = e.nextInChain()
		e.queued = f.Next
	}
	if out.inBatch && !e.plain && e.batches != nil && e.batch() != "" {
		f.Batch = &jobqueue.BatchEntry{ID: e.batch(), JobUUID: e.payload.UUID}
		f.Hooks = e.hooks.ForSuccess(e.carried)
	}
	if f.Next == nil && f.Batch == nil {
		e.completer.delete(row)
		return
	}
	e.completer.finish(row, f)
}

// fail writes a failed_jobs row and deletes the job in one transaction,
// with the batch's failure when the outcome counts in the job's batch,
// and the failure's hook job when the bridge runs them (failed(),
// JobFailed listeners, chain catch and batch callbacks, in PHP).
func (e *jobExecutor) fail(row jobqueue.JobRow, out outcome) {
	var err error
	if out.err != nil {
		err = phpexception.WithFrame(out.err, out.where)
	}
	if note := e.chainStoppedNote(); note != nil {
		err = errors.Join(err, note)
	}
	var batch func(context.Context) (*jobqueue.BatchEntry, error)
	allowFailures := false
	if out.inBatch && e.batches != nil && e.batch() != "" {
		batch = e.batches.Failure(e.batch(), e.payload.UUID)
		if info, ok := e.batches.Cached(e.batch()); ok {
			allowFailures = info.AllowFailures
		}
	}
	var hooks *jobqueue.Hooks
	if !out.noHooks {
		hooks = e.hooks.ForFailure(row, e.payload, out.err, allowFailures, e.carried)
	}
	e.completer.fail(row, e.payload, phpexception.FailureText(err), batch, hooks)
}

// chainStoppedNote explains, in failed_jobs, what Laravel would have done
// next on failure of a chained job and Go could not: run the chain's catch
// callbacks (PHP closures), when the bridge does not run them. The rest of
// the chain is not dispatched, as in Laravel.
func (e *jobExecutor) chainStoppedNote() error {
	if e.payload == nil || e.payload.Data.Command == "" || e.hooks.ChainCatch || e.plain {
		return nil
	}
	cmd, err := e.job.Command()
	if err != nil {
		return nil
	}
	q := cmd.Queueable()
	if len(q.ChainCatchCallbacks) == 0 && len(q.Chained) == 0 {
		return nil
	}
	return &handlers.PHPException{Class: `LaraWorker\ChainStoppedException`, Message: fmt.Sprintf(
		"The chain stopped at this job: %d later job(s) were not dispatched; its %d catch callback(s) are PHP closures that did not run (Go cannot run PHP code).",
		len(q.Chained), len(q.ChainCatchCallbacks))}
}

// metricsClass is the class label of the job metrics: the registered
// spelling for classes with a handler, "other" for the rest. Every label
// value lives as long as the process, so it must not come from payloads,
// which anyone who can write the jobs table controls.
func (d *executorDeps) metricsClass(p *payload.Payload) string {
	if p != nil {
		if name, ok := d.reg.Route(p.DisplayName); ok {
			return name
		}
	}
	return "other"
}

func (e *jobExecutor) logOutcome(row jobqueue.JobRow, out outcome) {
	ev := e.log.Info()
	if out.verdict == verdictFail {
		ev = e.log.Warn()
	}
	if !ev.Enabled() {
		return // no field to compute for a logger that drops the line
	}
	if out.err != nil {
		ev = ev.Str("error", out.err.Error())
	}
	if out.verdict == verdictFail && !e.hooks.Failures {
		ev = ev.Str("not_run", bridgehooks.NotRunWithoutBridge)
	}
	p := e.payload
	ev = ev.Str("uuid", p.UUID).Int64("id", row.ID).Str("class", p.Name()).Str("queue", row.Queue).
		Int("attempt", row.Attempts).Dur("duration_ms", e.clock.Now().Sub(e.started)).Str("outcome", out.reason)
	withContext(ev, e.job).Msg("job")
}

// withContext adds the visible data of the job's Laravel Context under
// "extra", as Laravel's logs carry it (Monolog's JSON); the hidden data
// never.
func withContext(ev *zerolog.Event, job *handlers.Job) *zerolog.Event {
	if job == nil {
		return ev
	}
	if extra := job.LogExtra(); extra != nil {
		return ev.RawJSON("extra", extra)
	}
	if _, err := job.LogContext(); err != nil {
		// PHP's hydrate would have thrown; the job runs without it.
		return ev.Str("context_error", err.Error())
	}
	return ev
}

// take claims the right to write the job's outcome and returns the row
// with its current token; false when the outcome was already written
// (released at shutdown) or the reservation was lost.
func (e *jobExecutor) take() (jobqueue.JobRow, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.settled || e.lost {
		return jobqueue.JobRow{}, false
	}
	e.settled = true
	return e.row, true
}

// current is the row with its current token.
func (e *jobExecutor) current() jobqueue.JobRow {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.row
}

// parsedPayload is the payload once the executor parsed it, else nil.
func (e *jobExecutor) parsedPayload() *payload.Payload {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.parsed
}
