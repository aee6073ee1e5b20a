// Package bridgehooks builds the laraworker bridge's hook jobs.
//
// What only PHP can run after a job Go ran (the class's failed(), the
// JobFailed listeners, a chain's catch callbacks, a batch's callbacks)
// runs in PHP through the bridge: the worker gives the store, with each
// outcome, the bridge's hook jobs to push onto its hooks queue in the
// outcome's own transaction (jobqueue.Followup.Hooks), built here.
// Without the bridge, the worker says at start and on each job what did
// not run.
package bridgehooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/worker/internal/phpexception"
	"github.com/rs/zerolog"
)

// NotRunWithoutBridge is what a job Go fails misses without the bridge.
const NotRunWithoutBridge = "the class's failed() method and JobFailed listeners did not run (and a chain's catch callbacks): install the bridge, see README"

// Builder builds the hook jobs of outcomes, as far as the bridge runs
// them: failures (RunFailureHooks), batch callbacks (RunBatchCallbacks).
type Builder struct {
	// Failures: the bridge runs failed() and JobFailed listeners;
	// Batches: batch callbacks; ChainCatch: a failed chain link's catch
	// callbacks.
	Failures, Batches, ChainCatch bool
	version                       string
	connection                    func() string
	log                           zerolog.Logger
}

// New checks that the bridge's hook jobs can be written where
// it runs them: a store with a hooks queue, and the app's Laravel version
// (the hook jobs' payload shape and the batch callbacks depend on it).
func New(bridge *bridgeproto.Bridge, version string, store jobqueue.Store, log zerolog.Logger) (*Builder, error) {
	h := &Builder{
		Failures: bridge.Has(bridgeproto.CapFailed), Batches: bridge.Has(bridgeproto.CapBatchCallbacks),
		version: version, connection: store.Connection, log: log,
	}
	h.ChainCatch = h.Failures && bridge.Has(bridgeproto.CapChainCatch)
	if !h.Failures && !h.Batches {
		return h, nil
	}
	if _, _, ok := store.HooksQueue(); !ok {
		return nil, errors.New("worker: the bridge runs failed() and batch callbacks in PHP from hook jobs the worker pushes onto its hooks_queue, but the store has no hooks queue (open it with the bridge's hooks_queue: database.Options.HooksQueue)")
	}
	if _, err := bridgeproto.AfterSuccess(h.version, bridgeproto.BatchState{}); err != nil {
		return nil, fmt.Errorf("worker: the bridge's hook jobs are written for the app's Laravel version: set LaravelVersion (work --laravel-version): %w", err)
	}
	return h, nil
}

// LogBridge says once, at start, what runs in PHP after a job Go ran and
// what does not.
func (h *Builder) LogBridge(b *bridgeproto.Bridge, store jobqueue.Store) {
	switch {
	case b == nil:
		h.log.Warn().Msg("the laraworker bridge is not installed: when Go fails a job, the class's failed() method and JobFailed listeners do not run, nor a failed chain link's catch callbacks; members of batches with then/catch/finally callbacks stay on PHP workers: install the bridge, see README")
		return
	case !h.Failures:
		h.log.Warn().Msg("the installed laraworker bridge predates failure hooks: when Go fails a job, the class's failed() method and JobFailed listeners do not run: update the bridge, see README")
	}
	if !h.Batches {
		h.log.Warn().Msg("the installed laraworker bridge does not run batch callbacks for Go: members of batches with then/catch/finally callbacks stay on PHP workers: update the bridge, see README")
	}
	if connection, queue, ok := store.HooksQueue(); ok && (h.Failures || h.Batches) {
		h.log.Info().Str("connection", connection).Str("queue", queue).
			Msg("hooks: failed(), JobFailed, chain catch and batch callbacks of the jobs Go runs run in PHP from jobs pushed onto this queue: a `php artisan queue:work` must serve it")
	}
}

// ForFailure is a failure's hook jobs: its RunFailureHooks, naming the
// batch callbacks its batch update triggers. Nil when the bridge does
// not run failure hooks, or for a payload PHP could not read either
// (logged).
func (h *Builder) ForFailure(row jobqueue.JobRow, p *payload.Payload, err error, allowFailures bool, carried func() payload.Carried) *jobqueue.Hooks {
	if h == nil || !h.Failures || p == nil {
		return nil
	}
	class, message := hookException(err)
	f := bridgeproto.Failure{
		Payload: row.Payload, Connection: h.connection(), Queue: row.Queue, JobID: jobIDOf(row, p),
		Attempts: int64(row.Attempts), ExceptionClass: class, ExceptionMessage: message,
	}
	opts := bridgeproto.Options{LaravelVersion: h.version, Carried: carried()}
	// Built once here so that nothing fails inside the store's
	// transaction (which the worker would retry for ever).
	if _, err := bridgeproto.FailureHooksPayload(f, opts); err != nil {
		h.log.Error().Err(err).Str("uuid", p.UUID).Str("class", p.Name()).Msg("cannot build the failure's hook job: its failed() and JobFailed listeners do not run in PHP")
		return nil
	}
	hooks := &jobqueue.Hooks{
		Failure: func(batchCallbacks []string) ([]byte, error) {
			f := f
			f.BatchCallbacks = batchCallbacks
			return bridgeproto.FailureHooksPayload(f, opts)
		},
	}
	if h.Batches {
		hooks.BatchCallbacks = h.decide(false, allowFailures)
		hooks.Batch = func(batchID string, which []string) ([]byte, error) {
			return bridgeproto.BatchCallbacksPayload(bridgeproto.BatchCallbacks{BatchID: batchID, Which: which, ExceptionClass: class, ExceptionMessage: message}, opts)
		}
	}
	return hooks
}

// ForSuccess is a batch member's success's hook jobs: the batch
// callbacks its update triggers. Nil when the bridge does not run them.
func (h *Builder) ForSuccess(carried func() payload.Carried) *jobqueue.Hooks {
	if h == nil || !h.Batches {
		return nil
	}
	opts := bridgeproto.Options{LaravelVersion: h.version, Carried: carried()}
	return &jobqueue.Hooks{
		BatchCallbacks: h.decide(true, false),
		Batch: func(batchID string, which []string) ([]byte, error) {
			return bridgeproto.BatchCallbacksPayload(bridgeproto.BatchCallbacks{BatchID: batchID, Which: which}, opts)
		},
	}
}

// decide names what Laravel's Batch runs after the update, from the
// counts the store's update returned and the batch's options as it read
// them under the lock.
func (h *Builder) decide(success, allowFailures bool) func(jobqueue.BatchUpdate) ([]string, error) {
	return func(u jobqueue.BatchUpdate) ([]string, error) {
		opts, err := bridgeproto.ReadBatchOptions(u.Before.Options)
		if err != nil {
			// Options Go cannot read: name every list, and let PHP, which
			// reads them itself, run what they hold (an empty list runs
			// nothing).
			opts = bridgeproto.BatchOptions{AllowFailures: allowFailures, Then: true, Catch: true, Finally: true, Progress: true, Failure: true}
		}
		s := bridgeproto.BatchState{TotalJobs: u.Before.TotalJobs, PendingJobs: u.Counts.PendingJobs, FailedJobs: u.Counts.FailedJobs, Options: opts}
		if success {
			return bridgeproto.AfterSuccess(h.version, s)
		}
		return bridgeproto.AfterFailure(h.version, s)
	}
}

// hookException is the class and message failed() gets: the failure's
// own exception, as failed_jobs names it first.
func hookException(err error) (class, message string) {
	if err == nil {
		return phpexception.ManuallyFailedClass, ""
	}
	err = phpexception.WithoutFrames(err)
	if joined, ok := err.(interface{ Unwrap() []error }); ok && len(joined.Unwrap()) > 0 {
		err = joined.Unwrap()[0]
	}
	return phpexception.ClassAndMessage(err)
}

// jobIDOf is the job's id as PHP's Job::getJobId reports it: a Redis
// job's payload "id", else the row's id.
func jobIDOf(row jobqueue.JobRow, p *payload.Payload) string {
	if raw, ok := p.Extra["id"]; ok {
		var id string
		if json.Unmarshal(raw, &id) == nil && id != "" {
			return id
		}
	}
	return strconv.FormatInt(row.ID, 10)
}

// HookClasses are the bridge's hook job classes: never Go's to run, even with
// --unrouted=fail (failing one would push another).
var HookClasses = []string{bridgeproto.RunFailureHooksClass, bridgeproto.RunBatchCallbacksClass}

// WarnUnknowable says once, at start, in one line naming the routes whose
// class Go knows nothing of beyond its payload, what it cannot know
// without the bridge: whether the class is ShouldBeUnique (a Laravel
// 8-11.38 payload does not carry the lock). Laravel 11.39+ writes the
// lock into the payload.
func WarnUnknowable(bridge *bridgeproto.Bridge, version string, reg *handlers.Registry, log zerolog.Logger) {
	if bridge.Has(bridgeproto.CapUnique) {
		return
	}
	if version != "" && appconfig.VersionCompare(version, "11.39") >= 0 {
		return
	}
	unique := reg.Unique()
	names := reg.Names()
	sort.Strings(names)
	var unknown []string
	for _, class := range names {
		if _, declared := unique[class]; !declared {
			unknown = append(unknown, class)
		}
	}
	if len(unknown) == 0 {
		return
	}
	log.Warn().Strs("classes", unknown).Msg("without the laraworker bridge, Go cannot tell from a Laravel 8-11.38 payload whether a class is ShouldBeUnique: for one that is, Go does not release its lock and Laravel drops its new dispatches until uniqueFor expires; install the bridge (see README), or declare it (handlers.ShouldBeUnique)")
}
