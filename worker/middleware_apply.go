package worker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/bridgeproto"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
)

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

// through runs inner inside the plan's middleware, outermost first.
func (e *jobExecutor) through(plan middlewarePlan, inner func() outcome) outcome {
	var next func(i int) outcome
	next = func(i int) outcome {
		if i == len(plan.steps) {
			return inner()
		}
		return e.apply(plan.steps[i], func() outcome { return next(i + 1) })
	}
	return next(0)
}

// apply runs one middleware around next.
func (e *jobExecutor) apply(s middlewareStep, next func() outcome) outcome {
	switch s.m.Type {
	case handlers.TypeWithoutOverlapping:
		return e.withoutOverlapping(s, next)
	case handlers.TypeRateLimited:
		return e.rateLimited(s, next)
	case handlers.TypeRateLimitedWithRedis:
		return e.rateLimitedWithRedis(s, next)
	case handlers.TypeThrottlesExceptions:
		return e.throttlesExceptions(s, next)
	case handlers.TypeThrottlesExceptionsWithRedis:
		return e.throttlesExceptionsWithRedis(s, next)
	case "Skip":
		if s.m.Skip {
			return stopped()
		}
	case handlers.TypeSkipIfBatchCancelled:
		if out, stop := e.skipIfBatchCancelled(); stop {
			return out
		}
	case "Release":
		if s.m.Release {
			return e.released(deref(s.m.ReleaseAfter))
		}
	}
	return next()
}

// stopped is a middleware returning without calling $next.
func stopped() outcome {
	return outcome{verdict: verdictDelete, inBatch: true, reason: reasonMiddlewareStopped}
}

// released is $job->release($seconds) by a middleware.
func (e *jobExecutor) released(seconds int64) outcome {
	return outcome{verdict: verdictRelease, delay: time.Duration(max(seconds, 0)) * time.Second, reason: reasonMiddlewareReleased}
}

// middlewareFailed is a store error inside a middleware: a job exception,
// as the QueryException or RedisException it would be in PHP.
func (e *jobExecutor) middlewareFailed(m bridgeproto.Middleware, err error) outcome {
	return outcome{verdict: verdictException, err: fmt.Errorf("%s: %w", m.Type, err), where: frame{File: "laraworker", Func: m.Type}}
}

// bypassesMiddleware: outcomes PHP's middleware never see come back from
// $next: the worker was killed at the timeout or stopped, or the command
// could not be unserialized (a model missing).
func (o outcome) bypassesMiddleware() bool {
	return o.verdict == verdictInterrupted || o.reason == reasonTimedOut || o.modelMissing()
}

// withoutOverlapping is WithoutOverlapping::handle: run with the lock,
// released (owner-checked) afterwards whatever happened; without it,
// release the job or, with dontRelease(), stop.
func (e *jobExecutor) withoutOverlapping(s middlewareStep, next func() outcome) outcome {
	owner, err := lockOwner()
	if err != nil {
		return e.middlewareFailed(s.m, err)
	}
	got, err := s.locks.Acquire(e.ctx, s.m.CacheKey, owner, s.lockSeconds)
	if err != nil {
		return e.middlewareFailed(s.m, err)
	}
	if !got {
		if s.m.DontRelease {
			return stopped()
		}
		if s.m.ReleaseAt != nil {
			return e.released(*s.m.ReleaseAt - e.clock.Now().Unix())
		}
		return e.released(deref(s.m.ReleaseAfter))
	}
	out := next()
	if out.abandoned {
		// The handler still runs: the lock stays until it expires.
		e.log.Error().Str("uuid", e.payload.UUID).Str("lock", s.m.CacheKey).
			Msg("WithoutOverlapping: the handler ignored cancellation and still runs; its lock is kept until it expires")
		return out
	}
	e.releaseLock(s, owner)
	return out
}

// releaseLock releases an overlap lock, retrying a failing store a few
// times: a lock left behind holds the key's other jobs back until it
// expires.
func (e *jobExecutor) releaseLock(s middlewareStep, owner string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), 10*time.Second)
	defer cancel()
	var err error
	for attempt, wait := 0, 100*time.Millisecond; attempt < 4; attempt, wait = attempt+1, wait*3 {
		if err = s.locks.ReleaseOwned(ctx, s.m.CacheKey, owner); err == nil || ctx.Err() != nil {
			break
		}
		sleep(ctx, e.clock, wait)
	}
	if err != nil {
		e.log.Error().Err(err).Str("uuid", e.payload.UUID).Str("lock", s.m.CacheKey).
			Msg("WithoutOverlapping: releasing the lock failed; the key's other jobs wait until it expires")
	}
}

// rateLimited is RateLimited::handle: a limit already used up releases
// the job (after releaseAfter, else when its window ends, + 3 s) or, with
// dontRelease(), stops it; else each limit takes a hit and the job runs.
func (e *jobExecutor) rateLimited(s middlewareStep, next func() outcome) outcome {
	if !s.m.Registered || s.m.Unlimited {
		return next()
	}
	r := rateLimiter{cache: s.cache, now: e.clock.Now}
	for _, l := range s.m.Limits {
		too, err := r.checkAndHit(e.ctx, s.m.Store, l.CacheKey, l.MaxAttempts, l.DecaySeconds)
		if err != nil {
			return e.middlewareFailed(s.m, err)
		}
		if too {
			if !s.m.Release {
				return stopped()
			}
			if after := deref(s.m.ReleaseAfter); after > 0 {
				return e.released(after)
			}
			in, err := r.availableIn(e.ctx, l.CacheKey)
			if err != nil {
				return e.middlewareFailed(s.m, err)
			}
			return e.released(in + 3)
		}
	}
	return next()
}

// rateLimitedWithRedis is RateLimitedWithRedis::handle: each limit
// acquires its DurationLimiter; one that refuses releases the job until
// its window ends (+ 3 s), or after releaseAfter, or stops it.
func (e *jobExecutor) rateLimitedWithRedis(s middlewareStep, next func() outcome) outcome {
	if !s.m.Registered || s.m.Unlimited {
		return next()
	}
	for _, l := range s.m.Limits {
		w, err := s.limiter.Acquire(e.ctx, l.Key, l.MaxAttempts, l.DecaySeconds)
		if err != nil {
			return e.middlewareFailed(s.m, err)
		}
		if !w.Acquired {
			if !s.m.Release {
				return stopped()
			}
			if after := deref(s.m.ReleaseAfter); after > 0 {
				return e.released(after)
			}
			return e.released(w.DecaysAt - e.clock.Now().Unix() + 3)
		}
	}
	return next()
}

// throttlesExceptions is ThrottlesExceptions::handle: while the key's
// exceptions are used up the job is released until the window ends
// (+ 3 s); else it runs: an exception is swallowed, counted, and the job
// released after the backoff; anything else clears the count.
func (e *jobExecutor) throttlesExceptions(s middlewareStep, next func() outcome) outcome {
	r := rateLimiter{cache: s.cache, now: e.clock.Now}
	key := s.m.CacheKey
	too, err := r.tooManyAttempts(e.ctx, key, s.m.MaxAttempts)
	if err != nil {
		return e.middlewareFailed(s.m, err)
	}
	if too {
		in, err := r.availableIn(e.ctx, key)
		if err != nil {
			return e.middlewareFailed(s.m, err)
		}
		return e.released(in + 3)
	}
	out := next()
	switch {
	case out.bypassesMiddleware():
		return out
	case out.verdict == verdictException:
		if _, err := r.hit(e.ctx, key, s.m.DecaySeconds); err != nil {
			return e.middlewareFailed(s.m, errors.Join(out.err, err))
		}
		return e.throttled(s, out)
	}
	if err := r.clear(e.ctx, key); err != nil {
		return e.middlewareFailed(s.m, err)
	}
	return out
}

// throttlesExceptionsWithRedis is ThrottlesExceptionsWithRedis::handle:
// as throttlesExceptions on a DurationLimiter, released until the window
// ends without the 3 s.
func (e *jobExecutor) throttlesExceptionsWithRedis(s middlewareStep, next func() outcome) outcome {
	w, err := s.limiter.TooManyAttempts(e.ctx, s.m.Key, s.m.MaxAttempts, s.m.DecaySeconds)
	if err != nil {
		return e.middlewareFailed(s.m, err)
	}
	if w.TooMany() {
		return e.released(w.DecaysAt - e.clock.Now().Unix())
	}
	out := next()
	switch {
	case out.bypassesMiddleware():
		return out
	case out.verdict == verdictException:
		if _, err := s.limiter.Acquire(e.ctx, s.m.Key, s.m.MaxAttempts, s.m.DecaySeconds); err != nil {
			return e.middlewareFailed(s.m, errors.Join(out.err, err))
		}
		return e.throttled(s, out)
	}
	if err := s.limiter.Clear(e.ctx, s.m.Key); err != nil {
		return e.middlewareFailed(s.m, err)
	}
	return out
}

// throttled is the release after a swallowed exception: no
// JobExceptionOccurred, no maxExceptions count, the attempt used.
func (e *jobExecutor) throttled(s middlewareStep, out outcome) outcome {
	return outcome{verdict: verdictRelease, delay: time.Duration(s.m.BackoffSeconds) * time.Second, err: out.err, reason: reasonThrottled}
}

// skipIfBatchCancelled is SkipIfBatchCancelled::handle.
func (e *jobExecutor) skipIfBatchCancelled() (outcome, bool) {
	if e.batches == nil || e.batch() == "" {
		return outcome{}, false
	}
	b, _, err := e.batches.find(e.ctx, e.batch())
	switch {
	case errors.Is(err, jobqueue.ErrBatchNotFound):
		return outcome{}, false
	case err != nil:
		return e.middlewareFailed(bridgeproto.Middleware{Type: handlers.TypeSkipIfBatchCancelled}, err), true
	case b.Cancelled():
		return stopped(), true
	}
	return outcome{}, false
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// lockOwner is Lock's owner: Str::random() (16 characters of
// [A-Za-z0-9]).
func lockOwner() (string, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b), nil
}
