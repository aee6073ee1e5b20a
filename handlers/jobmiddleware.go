package handlers

import (
	"fmt"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
)

// Laravel's job middleware, declared on a registration: the worker applies
// each around the handler with Laravel's semantics and Laravel's own keys,
// in the app's cache store, so that while a class runs on PHP and Go
// workers both share one overlap lock and one rate-limit budget. Declare
// them in the order the PHP class's middleware() returns them (the first
// is the outermost):
//
//	reg.HandleFunc(`App\Jobs\SyncPodcast`, sync,
//		handlers.WithoutOverlapping(handlers.KeyProperty("podcastId"), handlers.ReleaseAfter(5*time.Second)),
//		handlers.RateLimited("podcasts", func(cmd *payload.Command) ([]handlers.Limit, error) {
//			return []handlers.Limit{handlers.PerMinute(3)}, nil
//		}))
//
// A job whose payload carries the bridge's record of its middleware
// (bridge/PROTOCOL.md) runs through that record instead: it is what PHP's
// middleware() returned for that very job.

// Types of job middleware (JobMiddleware.Type), as Laravel names the
// classes in Illuminate\Queue\Middleware.
const (
	TypeWithoutOverlapping           = "WithoutOverlapping"
	TypeRateLimited                  = "RateLimited"
	TypeRateLimitedWithRedis         = "RateLimitedWithRedis"
	TypeThrottlesExceptions          = "ThrottlesExceptions"
	TypeThrottlesExceptionsWithRedis = "ThrottlesExceptionsWithRedis"
	TypeSkipIfBatchCancelled         = "SkipIfBatchCancelled"
)

// JobMiddleware is one job middleware a registration declares; the
// constructors (WithoutOverlapping, RateLimited, ...) fill it and
// Class.Middleware lists them. Durations are whole seconds, as Laravel
// keeps them.
type JobMiddleware struct {
	// Type is one of the Type constants.
	Type string
	// Key is WithoutOverlapping's key (new WithoutOverlapping($key)).
	Key KeyFunc
	// ReleaseAfter is releaseAfter(): how long a job that did not get the
	// lock (WithoutOverlapping) or was limited (RateLimited, Laravel
	// 12.13+) waits on the queue; nil is Laravel's default (0 for
	// WithoutOverlapping; the limiter's window for RateLimited).
	ReleaseAfter *time.Duration
	// DontRelease is dontRelease(): such a job is deleted instead, and
	// counts as done.
	DontRelease bool
	// ExpireAfter is WithoutOverlapping's expireAfter(): the lock's
	// lifetime; 0 is the store's default (none on Redis, the lock timeout
	// on the database store).
	ExpireAfter time.Duration
	// Shared is WithoutOverlapping's shared() (Laravel 9.32+): the key is
	// not tied to the class.
	Shared bool
	// Prefix is withPrefix(); "" is Laravel's ("laravel-queue-overlap:",
	// "laravel_throttles_exceptions:").
	Prefix string
	// Limiter names the rate limiter (RateLimiter::for's name); Limits is
	// its closure.
	Limiter string
	Limits  LimiterFunc
	// MaxAttempts and Decay are ThrottlesExceptions' arguments; Backoff is
	// its backoff(); By its by() (nil: the class); ByJob its byJob().
	MaxAttempts int64
	Decay       time.Duration
	Backoff     time.Duration
	By          KeyFunc
	ByJob       bool
	// Connection is the Redis connection of the ...WithRedis variants
	// (connection(), Laravel 12.51+); "" is "default".
	Connection string
}

// KeyFunc computes a key from a job's command, as the PHP middleware()
// does from $this.
type KeyFunc func(cmd *payload.Command) (string, error)

// KeyProperty is a key that is a property of the command, as
// `new WithoutOverlapping($this->podcastId)` (converted to a string as PHP
// does: ints in decimal, true as "1", false and null as "").
func KeyProperty(name string) KeyFunc { return KeyFunc(UniqueIDProperty(name)) }

// KeyString is a constant key, as `->by('feeds')`.
func KeyString(key string) KeyFunc {
	return func(*payload.Command) (string, error) { return key, nil }
}

// Limit is one limit a rate limiter returns (Illuminate\Cache\
// RateLimiting\Limit): at most MaxAttempts jobs per Decay, counted under
// Key.
type Limit struct {
	Key         string
	MaxAttempts int64
	Decay       time.Duration
}

// PerMinute is Limit::perMinute($n).
func PerMinute(n int64) Limit { return Limit{MaxAttempts: n, Decay: time.Minute} }

// PerMinutes is Limit::perMinutes($minutes, $n).
func PerMinutes(minutes, n int64) Limit {
	return Limit{MaxAttempts: n, Decay: time.Duration(minutes) * time.Minute}
}

// PerHour is Limit::perHour($n).
func PerHour(n int64) Limit { return Limit{MaxAttempts: n, Decay: time.Hour} }

// PerDay is Limit::perDay($n).
func PerDay(n int64) Limit { return Limit{MaxAttempts: n, Decay: 24 * time.Hour} }

// PerSecond is Limit::perSecond($n) (Laravel 11+).
func PerSecond(n int64) Limit { return Limit{MaxAttempts: n, Decay: time.Second} }

// By is Limit::by($key).
func (l Limit) By(key string) Limit { l.Key = key; return l }

// LimiterFunc is a rate limiter's closure (RateLimiter::for($name, fn
// ($job) => ...)): the limits of one job. No limits (Limit::none()) lets
// the job run.
type LimiterFunc func(cmd *payload.Command) ([]Limit, error)

// MiddlewareOption is one of the fluent methods of a job middleware.
type MiddlewareOption func(*JobMiddleware)

// ReleaseAfter is releaseAfter($seconds).
func ReleaseAfter(d time.Duration) MiddlewareOption {
	return func(m *JobMiddleware) { m.ReleaseAfter = &d }
}

// DontRelease is dontRelease().
func DontRelease() MiddlewareOption { return func(m *JobMiddleware) { m.DontRelease = true } }

// ExpireAfter is WithoutOverlapping's expireAfter($seconds).
func ExpireAfter(d time.Duration) MiddlewareOption {
	return func(m *JobMiddleware) { m.ExpireAfter = d }
}

// Shared is WithoutOverlapping's shared().
func Shared() MiddlewareOption { return func(m *JobMiddleware) { m.Shared = true } }

// WithPrefix is withPrefix($prefix).
func WithPrefix(prefix string) MiddlewareOption {
	return func(m *JobMiddleware) { m.Prefix = prefix }
}

// By is ThrottlesExceptions' by($key).
func By(key KeyFunc) MiddlewareOption { return func(m *JobMiddleware) { m.By = key } }

// ByJob is ThrottlesExceptions' byJob(): the key is the job's uuid.
func ByJob() MiddlewareOption { return func(m *JobMiddleware) { m.ByJob = true } }

// Backoff is ThrottlesExceptions' backoff($minutes): how long a job whose
// exception was throttled waits on the queue.
func Backoff(d time.Duration) MiddlewareOption { return func(m *JobMiddleware) { m.Backoff = d } }

// Connection is connection($name) of the ...WithRedis variants.
func Connection(name string) MiddlewareOption {
	return func(m *JobMiddleware) { m.Connection = name }
}

// WithoutOverlapping is `new WithoutOverlapping($key)`: one job of the
// class per key runs at a time, across PHP and Go workers. A job that
// does not get the lock is released (after ReleaseAfter; the attempt
// counts, as in Laravel), or deleted as done with DontRelease.
func WithoutOverlapping(key KeyFunc, opts ...MiddlewareOption) Option {
	return declare(JobMiddleware{Type: TypeWithoutOverlapping, Key: key}, opts)
}

// RateLimited is `new RateLimited($limiter)` with the limiter registered
// as RateLimiter::for($limiter, limits): each job takes one hit of every
// limit before it runs; a limited job is released until its window ends
// (the attempt counts), or deleted as done with DontRelease.
func RateLimited(limiter string, limits LimiterFunc, opts ...MiddlewareOption) Option {
	return declare(JobMiddleware{Type: TypeRateLimited, Limiter: limiter, Limits: limits}, opts)
}

// RateLimitedWithRedis is `new RateLimitedWithRedis($limiter)`: as
// RateLimited, counted in a DurationLimiter on a Redis connection.
func RateLimitedWithRedis(limiter string, limits LimiterFunc, opts ...MiddlewareOption) Option {
	return declare(JobMiddleware{Type: TypeRateLimitedWithRedis, Limiter: limiter, Limits: limits}, opts)
}

// ThrottlesExceptions is `new ThrottlesExceptions($maxAttempts, $decay)`:
// a job's exception is swallowed and the job released after Backoff,
// counting one hit; once maxAttempts hits are counted within decay, jobs
// are released without running until the window ends. A job that
// succeeds clears the count. Give decay as a duration: Laravel 8-10 take
// it in minutes, 11+ in seconds.
func ThrottlesExceptions(maxAttempts int64, decay time.Duration, opts ...MiddlewareOption) Option {
	return declare(JobMiddleware{Type: TypeThrottlesExceptions, MaxAttempts: maxAttempts, Decay: decay}, opts)
}

// ThrottlesExceptionsWithRedis is `new ThrottlesExceptionsWithRedis(...)`:
// as ThrottlesExceptions, counted in a DurationLimiter on a Redis
// connection.
func ThrottlesExceptionsWithRedis(maxAttempts int64, decay time.Duration, opts ...MiddlewareOption) Option {
	return declare(JobMiddleware{Type: TypeThrottlesExceptionsWithRedis, MaxAttempts: maxAttempts, Decay: decay}, opts)
}

// SkipIfBatchCancelled is `new SkipIfBatchCancelled`: a job of a
// cancelled batch is deleted without running and counts as done.
func SkipIfBatchCancelled() Option {
	return declare(JobMiddleware{Type: TypeSkipIfBatchCancelled}, nil)
}

func declare(m JobMiddleware, opts []MiddlewareOption) Option {
	for _, o := range opts {
		o(&m)
	}
	return func(c *Class) { c.Middleware = append(c.Middleware, m) }
}

// validate refuses what the PHP middleware could not be: options of
// another middleware, keys that are missing, limits that allow nothing.
func (m JobMiddleware) validate() error {
	bad := func(what string) error { return fmt.Errorf("handlers: %s: %s", m.Type, what) }
	overlap := m.Type == TypeWithoutOverlapping
	limited := m.Type == TypeRateLimited || m.Type == TypeRateLimitedWithRedis
	throttles := m.Type == TypeThrottlesExceptions || m.Type == TypeThrottlesExceptionsWithRedis
	redisVariant := m.Type == TypeRateLimitedWithRedis || m.Type == TypeThrottlesExceptionsWithRedis
	switch {
	case !overlap && !limited && !throttles && m.Type != TypeSkipIfBatchCancelled:
		return fmt.Errorf("handlers: unknown job middleware %q", m.Type)
	case overlap && m.Key == nil:
		return bad("needs a key (KeyProperty, KeyString or a KeyFunc)")
	case limited && (m.Limiter == "" || m.Limits == nil):
		return bad("needs the limiter's name and its limits")
	case throttles && (m.MaxAttempts < 1 || m.Decay < time.Second):
		return bad("needs at least 1 attempt and a decay of at least a second")
	case (m.ReleaseAfter != nil || m.DontRelease) && !overlap && !limited:
		return bad("ReleaseAfter and DontRelease are WithoutOverlapping's and RateLimited's")
	case (m.ExpireAfter != 0 || m.Shared) && !overlap:
		return bad("ExpireAfter and Shared are WithoutOverlapping's")
	case m.Prefix != "" && !overlap && !throttles:
		return bad("WithPrefix is WithoutOverlapping's and ThrottlesExceptions'")
	case (m.By != nil || m.ByJob || m.Backoff != 0) && !throttles:
		return bad("By, ByJob and Backoff are ThrottlesExceptions'")
	case m.Connection != "" && !redisVariant:
		return bad("Connection is the ...WithRedis variants'")
	case m.ReleaseAfter != nil && *m.ReleaseAfter < 0, m.ExpireAfter < 0, m.Backoff < 0:
		return bad("durations must not be negative")
	}
	return nil
}
