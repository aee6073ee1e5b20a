package worker

import (
	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/bridgeproto"
	"github.com/laraworker/laraworker/handlers"
)

// The executor's side of the middleware: which plan a job runs through,
// and where the handler and an UntilProcessing lock sit inside it.

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
func (e *jobExecutor) middlewarePlan() (middlewarePlan, outcome, bool) {
	if e.payload.Data.Command == "" {
		return middlewarePlan{}, outcome{}, true // a Class@method job has none
	}
	class := e.className()
	meta, err := e.metadata()
	switch {
	case err != nil:
		out := e.middlewareNotApplied(class, []string{"the payload's bridge record is unreadable: " + err.Error()})
		return middlewarePlan{}, out, false
	case meta != nil:
		return e.recordedPlan(class, meta)
	}
	decls := e.job.Class().Middleware
	if len(decls) == 0 {
		if e.mw.once("norecord\x00" + class) {
			e.log.Info().Str("class", class).Msg("jobs of this class carry no bridge record of their job middleware: if the PHP class has middleware(), Go does not apply it (install the bridge, or declare it on the registration: handlers.WithoutOverlapping, handlers.RateLimited, ...)")
		}
		return middlewarePlan{}, outcome{}, true
	}
	cmd, err := e.job.Command()
	if err == nil {
		var plan middlewarePlan
		if plan, err = e.mw.planFromRegistration(decls, e.payload, cmd); err == nil {
			return plan, outcome{}, true
		}
	}
	return middlewarePlan{}, e.onException(err, frame{File: "laraworker", Func: "middleware"}), false
}

// recordedPlan is the plan of the bridge's record; a record Go cannot
// apply in full sends the job back to PHP, unless the class opted in.
func (e *jobExecutor) recordedPlan(class string, meta *bridgeproto.Metadata) (middlewarePlan, outcome, bool) {
	plan, problems := e.mw.planFromRecord(meta)
	if len(problems) > 0 && !e.mw.optedIn(class) {
		return plan, e.middlewareNotApplied(class, problems), false
	}
	e.problems.clearClass(kindMiddleware, class)
	if len(problems) > 0 {
		plan.skipped = problems
		e.log.Warn().Str("uuid", e.payload.UUID).Str("class", class).Strs("not_applied", problems).
			Msg("job runs in Go without the middleware Go cannot apply (RunWithoutPHPMiddleware)")
	}
	if len(plan.steps) > 0 && e.mw.once("record\x00"+class) {
		e.log.Info().Str("class", class).Strs("middleware", plan.describe()).
			Msg("applying the job middleware the bridge recorded, sharing their state with PHP workers")
	}
	return plan, outcome{}, true
}

// middlewareNotApplied gives the job back to PHP and reports the class as
// a configuration problem (not claimed for a minute, logged, counted).
func (e *jobExecutor) middlewareNotApplied(class string, problems []string) outcome {
	err := &errMiddlewareNotApplied{class: class, what: problems}
	e.problems.report(&ConfigError{Kind: kindMiddleware, Class: class, Err: err})
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
func (e *jobExecutor) throughMiddleware(plan middlewarePlan, h handlers.Handler) outcome {
	version := e.laravelVersion()
	inside := atLeast(version, "11.40")
	if !inside {
		e.releaseBeforeRun()
	}
	ran := false
	out := e.through(plan, func() outcome {
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
