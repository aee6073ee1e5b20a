package jobmiddleware

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/rs/zerolog"
)

// Outcome is a run's outcome as a middleware reads what $next returned.
type Outcome interface {
	// Threw is the exception the handler threw (threw: it did), before
	// Laravel's exception rules decide what it means: a
	// ThrottlesExceptions catches it first.
	Threw() (err error, threw bool)
	// BypassesMiddleware: PHP's middleware never see this outcome come
	// back from $next (the worker was killed at the timeout or stopped,
	// or the command could not be unserialized).
	BypassesMiddleware() bool
	// Abandoned: the handler ignored its cancellation and still runs.
	Abandoned() bool
}

// Job is the job a plan runs for, and the outcomes a middleware decides
// on its own, which the worker writes.
type Job[O Outcome] interface {
	Context() context.Context
	UUID() string
	// Stopped is a middleware returning without calling $next: Laravel
	// deletes the job and counts it as done (chain and batch included).
	Stopped() O
	// Released is $job->release($seconds) by a middleware; the attempt
	// counts, as in Laravel.
	Released(seconds int64) O
	// Failed is a store error inside middleware m: a job exception, as
	// the QueryException or RedisException it would be in PHP.
	Failed(m bridgeproto.Middleware, err error) O
	// Throttled is the release after ThrottlesExceptions swallowed err:
	// no JobExceptionOccurred, no maxExceptions count, the attempt used.
	Throttled(backoff time.Duration, err error) O
	// BatchCancelled reports whether the job's batch was cancelled
	// (false when it is in none, or the batch is gone).
	BatchCancelled() (bool, error)
}

// Runner is what applying a plan takes besides the job.
type Runner struct {
	Clock clock.Clock
	Log   zerolog.Logger
}

// Through runs inner inside the plan's middleware, outermost first.
func Through[O Outcome](r Runner, job Job[O], plan Plan, inner func() O) O {
	c := chain[O]{Runner: r, job: job, ctx: job.Context()}
	var next func(i int) O
	next = func(i int) O {
		if i == len(plan.Steps) {
			return inner()
		}
		return c.apply(plan.Steps[i], func() O { return next(i + 1) })
	}
	return next(0)
}

// chain applies one job's middleware.
type chain[O Outcome] struct {
	Runner
	job Job[O]
	ctx context.Context
}

// apply runs one middleware around next.
func (c chain[O]) apply(s Step, next func() O) O {
	switch s.m.Type {
	case handlers.TypeWithoutOverlapping:
		return c.withoutOverlapping(s, next)
	case handlers.TypeRateLimited:
		return c.rateLimited(s, next)
	case handlers.TypeRateLimitedWithRedis:
		return c.rateLimitedWithRedis(s, next)
	case handlers.TypeThrottlesExceptions:
		return c.throttlesExceptions(s, next)
	case handlers.TypeThrottlesExceptionsWithRedis:
		return c.throttlesExceptionsWithRedis(s, next)
	case "Skip":
		if s.m.Skip {
			return c.job.Stopped()
		}
	case handlers.TypeSkipIfBatchCancelled:
		// SkipIfBatchCancelled::handle.
		cancelled, err := c.job.BatchCancelled()
		if err != nil {
			return c.job.Failed(bridgeproto.Middleware{Type: handlers.TypeSkipIfBatchCancelled}, err)
		}
		if cancelled {
			return c.job.Stopped()
		}
	case "Release":
		if s.m.Release {
			return c.job.Released(deref(s.m.ReleaseAfter))
		}
	}
	return next()
}

// withoutOverlapping is WithoutOverlapping::handle: run with the lock,
// released (owner-checked) afterwards whatever happened; without it,
// release the job or, with dontRelease(), stop.
func (c chain[O]) withoutOverlapping(s Step, next func() O) O {
	owner, err := lockOwner()
	if err != nil {
		return c.job.Failed(s.m, err)
	}
	got, err := s.locks.Acquire(c.ctx, s.m.CacheKey, owner, s.lockSeconds)
	if err != nil {
		return c.job.Failed(s.m, err)
	}
	if !got {
		if s.m.DontRelease {
			return c.job.Stopped()
		}
		if s.m.ReleaseAt != nil {
			return c.job.Released(*s.m.ReleaseAt - c.Clock.Now().Unix())
		}
		return c.job.Released(deref(s.m.ReleaseAfter))
	}
	out := next()
	if out.Abandoned() {
		// The handler still runs: the lock stays until it expires.
		c.Log.Error().Str("uuid", c.job.UUID()).Str("lock", s.m.CacheKey).
			Msg("WithoutOverlapping: the handler ignored cancellation and still runs; its lock is kept until it expires")
		return out
	}
	c.releaseLock(s, owner)
	return out
}

// releaseLock releases an overlap lock, retrying a failing store a few
// times: a lock left behind holds the key's other jobs back until it
// expires.
func (c chain[O]) releaseLock(s Step, owner string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 10*time.Second)
	defer cancel()
	var err error
	for attempt, wait := 0, 100*time.Millisecond; attempt < 4; attempt, wait = attempt+1, wait*3 {
		if err = s.locks.ReleaseOwned(ctx, s.m.CacheKey, owner); err == nil || ctx.Err() != nil {
			break
		}
		clock.Sleep(ctx, c.Clock, wait)
	}
	if err != nil {
		c.Log.Error().Err(err).Str("uuid", c.job.UUID()).Str("lock", s.m.CacheKey).
			Msg("WithoutOverlapping: releasing the lock failed; the key's other jobs wait until it expires")
	}
}

// rateLimited is RateLimited::handle: a limit already used up releases
// the job (after releaseAfter, else when its window ends, + 3 s) or, with
// dontRelease(), stops it; else each limit takes a hit and the job runs.
func (c chain[O]) rateLimited(s Step, next func() O) O {
	if !s.m.Registered || s.m.Unlimited {
		return next()
	}
	r := RateLimiter{Cache: s.cache, Now: c.Clock.Now}
	for _, l := range s.m.Limits {
		too, err := r.CheckAndHit(c.ctx, s.m.Store, l.CacheKey, l.MaxAttempts, l.DecaySeconds)
		if err != nil {
			return c.job.Failed(s.m, err)
		}
		if too {
			if !s.m.Release {
				return c.job.Stopped()
			}
			if after := deref(s.m.ReleaseAfter); after > 0 {
				return c.job.Released(after)
			}
			in, err := r.AvailableIn(c.ctx, l.CacheKey)
			if err != nil {
				return c.job.Failed(s.m, err)
			}
			return c.job.Released(in + 3)
		}
	}
	return next()
}

// rateLimitedWithRedis is RateLimitedWithRedis::handle: each limit
// acquires its DurationLimiter; one that refuses releases the job until
// its window ends (+ 3 s), or after releaseAfter, or stops it.
func (c chain[O]) rateLimitedWithRedis(s Step, next func() O) O {
	if !s.m.Registered || s.m.Unlimited {
		return next()
	}
	for _, l := range s.m.Limits {
		w, err := s.limiter.Acquire(c.ctx, l.Key, l.MaxAttempts, l.DecaySeconds)
		if err != nil {
			return c.job.Failed(s.m, err)
		}
		if !w.Acquired {
			if !s.m.Release {
				return c.job.Stopped()
			}
			if after := deref(s.m.ReleaseAfter); after > 0 {
				return c.job.Released(after)
			}
			return c.job.Released(w.DecaysAt - c.Clock.Now().Unix() + 3)
		}
	}
	return next()
}

// throttlesExceptions is ThrottlesExceptions::handle: while the key's
// exceptions are used up the job is released until the window ends
// (+ 3 s); else it runs: an exception is swallowed, counted, and the job
// released after the backoff; anything else clears the count.
func (c chain[O]) throttlesExceptions(s Step, next func() O) O {
	r := RateLimiter{Cache: s.cache, Now: c.Clock.Now}
	key := s.m.CacheKey
	too, err := r.TooManyAttempts(c.ctx, key, s.m.MaxAttempts)
	if err != nil {
		return c.job.Failed(s.m, err)
	}
	if too {
		in, err := r.AvailableIn(c.ctx, key)
		if err != nil {
			return c.job.Failed(s.m, err)
		}
		return c.job.Released(in + 3)
	}
	out := next()
	if out.BypassesMiddleware() {
		return out
	}
	if thrown, threw := out.Threw(); threw {
		if _, err := r.Hit(c.ctx, key, s.m.DecaySeconds); err != nil {
			return c.job.Failed(s.m, errors.Join(thrown, err))
		}
		return c.job.Throttled(time.Duration(s.m.BackoffSeconds)*time.Second, thrown)
	}
	if err := r.Clear(c.ctx, key); err != nil {
		return c.job.Failed(s.m, err)
	}
	return out
}

// throttlesExceptionsWithRedis is ThrottlesExceptionsWithRedis::handle:
// as throttlesExceptions on a DurationLimiter, released until the window
// ends without the 3 s.
func (c chain[O]) throttlesExceptionsWithRedis(s Step, next func() O) O {
	w, err := s.limiter.TooManyAttempts(c.ctx, s.m.Key, s.m.MaxAttempts, s.m.DecaySeconds)
	if err != nil {
		return c.job.Failed(s.m, err)
	}
	if w.TooMany() {
		return c.job.Released(w.DecaysAt - c.Clock.Now().Unix())
	}
	out := next()
	if out.BypassesMiddleware() {
		return out
	}
	if thrown, threw := out.Threw(); threw {
		if _, err := s.limiter.Acquire(c.ctx, s.m.Key, s.m.MaxAttempts, s.m.DecaySeconds); err != nil {
			return c.job.Failed(s.m, errors.Join(thrown, err))
		}
		return c.job.Throttled(time.Duration(s.m.BackoffSeconds)*time.Second, thrown)
	}
	if err := s.limiter.Clear(c.ctx, s.m.Key); err != nil {
		return c.job.Failed(s.m, err)
	}
	return out
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
