package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/worker/internal/configproblem"
	"github.com/laraworker/laraworker/worker/internal/jobmiddleware"
)

// The executor's side of Laravel's job middleware (package jobmiddleware
// runs them): which plan a job runs through, where the handler and an
// UntilProcessing lock sit inside it, and the outcomes a middleware
// decides.

// Outcome reasons of the middleware.
const (
	// reasonMiddlewareStopped: a middleware returned without running the
	// job (Skip, SkipIfBatchCancelled, dontRelease()): Laravel deletes it
	// and counts it as done (chain and batch included).
	reasonMiddlewareStopped = "skipped_by_middleware"
	// reasonMiddlewareReleased: a middleware released the job; the
	// attempt counts, as in Laravel.
	reasonMiddlewareReleased = "released_by_middleware"
	// reasonThrottled: ThrottlesExceptions swallowed the exception and
	// released the job.
	reasonThrottled = "released_throttled_exception"
	// reasonMiddlewareNotApplied: Go cannot apply the job's middleware;
	// given back to PHP.
	reasonMiddlewareNotApplied = "middleware_not_applied"
)

// metadata is the payload's bridge record, read once (nil when it has
// none).
func (e *jobExecutor) metadata() (*bridgeproto.Metadata, error) {
	if !e.metaRead {
		e.meta, e.metaErr = bridgeproto.ReadMetadata(e.payload)
		e.metaRead = true
	}
	return e.meta, e.metaErr
}

// className is the class as registered (the payload's name for others).
func (e *jobExecutor) className() string {
	if name, ok := e.reg.Route(e.payload.DisplayName); ok {
		return name
	}
	return e.payload.Name()
}

// middlewarePlan is what the job runs through: the middleware its payload
// records, else those its registration declares. ok is false, with the
// outcome, when the job does not run: Go cannot apply its middleware (it
// goes back to PHP), or a declared one cannot be computed (a job
// exception, as PHP's middleware() throwing).
func (e *jobExecutor) middlewarePlan() (jobmiddleware.Plan, outcome, bool) {
	if e.payload.Data.Command == "" {
		return jobmiddleware.Plan{}, outcome{}, true // a Class@method job has none
	}
	class := e.className()
	meta, err := e.metadata()
	switch {
	case err != nil: // decide failed the job already; never the class's problem
		return jobmiddleware.Plan{}, e.unreadableRecord(err), false
	case meta != nil:
		return e.recordedPlan(class, meta)
	}
	decls := e.job.Class().Middleware
	if len(decls) == 0 {
		if e.mw.OnceFor("norecord", class) {
			e.log.Info().Str("class", class).Msg("jobs of this class carry no bridge record of their job middleware: if the PHP class has middleware(), Go does not apply it (install the bridge, or declare it on the registration: handlers.WithoutOverlapping, handlers.RateLimited, ...)")
		}
		return jobmiddleware.Plan{}, outcome{}, true
	}
	cmd, err := e.job.Command()
	if err == nil {
		var plan jobmiddleware.Plan
		if plan, err = e.mw.PlanFromRegistration(decls, e.payload, cmd); err == nil {
			return plan, outcome{}, true
		}
	}
	return jobmiddleware.Plan{}, e.onException(err, frame{File: "laraworker", Func: "middleware"}), false
}

// recordedPlan is the plan of the bridge's record; a record Go cannot
// apply in full sends the job back to PHP, unless the class opted in.
func (e *jobExecutor) recordedPlan(class string, meta *bridgeproto.Metadata) (jobmiddleware.Plan, outcome, bool) {
	plan, problems := e.mw.PlanFromRecord(meta)
	if len(problems) > 0 && !e.mw.OptedIn(class) {
		return plan, e.middlewareNotApplied(class, problems), false
	}
	e.problems.ClearClass(configproblem.KindMiddleware, class)
	if len(problems) > 0 {
		plan.Skipped = problems
		e.log.Warn().Str("uuid", e.payload.UUID).Str("class", class).Strs("not_applied", problems).
			Msg("job runs in Go without the middleware Go cannot apply (RunWithoutPHPMiddleware)")
	}
	if len(plan.Steps) > 0 && e.mw.OnceFor("record", class) {
		e.log.Info().Str("class", class).Strs("middleware", plan.Describe()).
			Msg("applying the job middleware the bridge recorded, sharing their state with PHP workers")
	}
	return plan, outcome{}, true
}

// middlewareNotApplied gives the job back to PHP and reports the class as
// a configuration problem (not claimed for a minute, logged, counted).
func (e *jobExecutor) middlewareNotApplied(class string, problems []string) outcome {
	err := &jobmiddleware.NotAppliedError{Class: class, What: problems}
	e.problems.Report(&configproblem.Error{Kind: configproblem.KindMiddleware, Class: class, Err: err})
	e.log.Warn().Str("uuid", e.payload.UUID).Str("class", class).Strs("not_applied", problems).
		Msg("job given back to PHP workers: Go cannot apply its job middleware")
	return outcome{verdict: verdictUnreserve, reason: reasonMiddlewareNotApplied}
}

// laravelVersion is the app's version: the worker's setting, else the
// one the job's bridge record names.
func (e *jobExecutor) laravelVersion() string {
	if e.cfg.LaravelVersion != "" {
		return e.cfg.LaravelVersion
	}
	if meta, _ := e.metadata(); meta != nil {
		return meta.Laravel
	}
	return ""
}

// atLeast: the version is min or newer; unknown counts as the newest.
func atLeast(version, min string) bool {
	return version == "" || appconfig.VersionCompare(version, min) >= 0
}

// throughMiddleware runs the handler inside the plan. A
// ShouldBeUniqueUntilProcessing lock is released before the middleware
// on 8.x-11.39, inside them just before the handler on 11.40+, and, on
// 12.21+, also after them when one stopped the job without releasing it.
func (e *jobExecutor) throughMiddleware(plan jobmiddleware.Plan, h handlers.Handler) outcome {
	version := e.laravelVersion()
	inside := atLeast(version, "11.40")
	if !inside {
		e.releaseBeforeRun()
	}
	ran := false
	out := jobmiddleware.Through(jobmiddleware.Runner{Clock: e.clock, Log: e.log}, middlewareJob{e}, plan, func() outcome {
		ran = true
		if inside {
			e.releaseBeforeRun()
		}
		return e.run(h)
	})
	if inside && !ran && out.verdict != verdictRelease && atLeast(version, "12.21") {
		e.releaseBeforeRun()
	}
	return out
}

// middlewareJob is the job as its middleware see it.
type middlewareJob struct{ e *jobExecutor }

func (j middlewareJob) Context() context.Context { return j.e.ctx }

func (j middlewareJob) UUID() string { return j.e.payload.UUID }

func (middlewareJob) Stopped() outcome {
	return outcome{verdict: verdictDelete, inBatch: true, reason: reasonMiddlewareStopped}
}

func (middlewareJob) Released(seconds int64) outcome {
	return outcome{verdict: verdictRelease, delay: time.Duration(max(seconds, 0)) * time.Second, reason: reasonMiddlewareReleased}
}

func (middlewareJob) Failed(m bridgeproto.Middleware, err error) outcome {
	return outcome{verdict: verdictException, err: fmt.Errorf("%s: %w", m.Type, err), where: frame{File: "laraworker", Func: m.Type}}
}

func (middlewareJob) Throttled(backoff time.Duration, err error) outcome {
	return outcome{verdict: verdictRelease, delay: backoff, err: err, reason: reasonThrottled}
}

// BatchCancelled is SkipIfBatchCancelled's test.
func (j middlewareJob) BatchCancelled() (bool, error) {
	e := j.e
	if e.batches == nil || e.batch() == "" {
		return false, nil
	}
	b, _, err := e.batches.Find(e.ctx, e.batch())
	switch {
	case errors.Is(err, jobqueue.ErrBatchNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return b.Cancelled(), nil
}

// Threw: the handler threw, and Laravel's exception rules have not
// decided yet.
func (o outcome) Threw() (error, bool) { return o.err, o.verdict == verdictException }

// BypassesMiddleware: outcomes PHP's middleware never see come back from
// $next: the worker was killed at the timeout or stopped, or the command
// could not be unserialized (a model missing).
func (o outcome) BypassesMiddleware() bool {
	return o.verdict == verdictInterrupted || o.reason == reasonTimedOut || o.modelMissing()
}

// Abandoned: the handler ignored the cancellation and still runs.
func (o outcome) Abandoned() bool { return o.abandoned }
