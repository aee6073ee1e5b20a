package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
)

// Config is everything a Worker is built from. The zero value is usable:
// WithDefaults fills every zero field with `php artisan queue:work`'s
// default (or laraworker's, for what artisan lacks). Where artisan's flag
// accepts 0 to mean "none" (--sleep=0, --timeout=0, --tries=0, --memory=0),
// the field takes a negative value for it, because 0 means "the default".
type Config struct {
	// Queues in strict priority order (--queue=high,default); empty means
	// the connection's default queue. Names are not trimmed, as in Laravel.
	Queues []string
	// QueueForwards is Laravel 13.26's Queue::forward as it applies to the
	// store's connection: a queue named here (the connection's default
	// queue when Queues is empty) is claimed from the queue it maps to, as
	// `php artisan queue:work --queue=old` pops the queue old forwards to.
	// Laravel's pause of a queue (queue:pause) still goes by the name
	// given. The app registers forwards in PHP at boot
	// (appconfig.AppInfo.QueueForwards reads them through its PHP).
	QueueForwards map[string]string
	// Name is --name: it tags every log line and the worker's stats.
	// Default "default".
	Name string
	// Sleep is how long to wait when no job is available (--sleep).
	// Default 3s; negative: do not sleep.
	Sleep time.Duration
	// IdlePoll (--idle-poll) bounds the adaptive poll of a store the worker
	// cannot wait on (the databases; idlewait.go): after a claim that found
	// nothing it waits a short interval that doubles, with jitter, up to
	// the shorter of IdlePoll and Sleep, and once nothing has run for a
	// minute up to Sleep, as PHP's worker sleeps. Default 1s; negative:
	// up to Sleep from the start. A store that signals pushes (Redis) is
	// waited on for Sleep instead.
	IdlePoll time.Duration
	// NarrowWhenIdle runs the process's Go code on one thread
	// (runtime.GOMAXPROCS(1)) once every worker of the process (whether
	// it sets this or not) has run nothing for 2 s, and on all of them
	// again before the next job is dispatched: an idle worker's polls then
	// wake fewer threads, a tenth to a third less CPU (narrow.go).
	// GOMAXPROCS is process-wide, so leave it off in a process that does
	// other work on the side (an HTTP server: it would run on one thread
	// while the queues are idle). The CLI sets it (--narrow-when-idle,
	// default on).
	NarrowWhenIdle bool
	// Rest is the pause after each claim that found jobs (--rest).
	// Default none.
	Rest time.Duration
	// Once runs a single job (--once).
	Once bool
	// StopWhenEmpty stops when the queues are empty (--stop-when-empty).
	StopWhenEmpty bool
	// MaxJobs stops after this many claimed jobs (--max-jobs). Default no
	// limit.
	MaxJobs int
	// MaxTime stops after this long (--max-time). Default no limit.
	MaxTime time.Duration
	// MemoryMB stops with exit status 12 when RSS reaches it (--memory).
	// Default 128; negative: never (as --memory=0 on Laravel 12.54+).
	MemoryMB int
	// Timeout applies when the payload has none (--timeout). Default 60s;
	// negative: no timeout.
	Timeout time.Duration
	// Tries applies when the payload has no maxTries (--tries). Default 1;
	// negative: unlimited (--tries=0).
	Tries int
	// Backoff is --backoff: seconds, or Laravel's "1,5,10" list. Default
	// "0".
	Backoff string

	// Concurrency is how many jobs run at once. Default 10.
	Concurrency int
	// Grace is how long running jobs may finish after a stop signal; then
	// their contexts are cancelled and what still runs is given back with
	// its attempt restored, so a deploy fails nothing. A job cut short more
	// than 3 times in a row (counted per uuid in Cache, for a day) has its
	// attempt counted instead, as Laravel's would; without a Cache the
	// attempt is always restored. Keep Grace above the jobs' timeouts.
	// Default 30s; negative: none.
	Grace time.Duration
	// WriteGrace bounds how long outcome writes that keep failing (the
	// database is down) are retried once the worker stops; then they are
	// dropped, counted in Stats.Dropped, and the jobs come back after
	// retry_after and run again, as after a crash. After a stop signal the
	// worker exits within Grace + WriteGrace, so a supervisor's stop
	// timeout (systemd TimeoutStopSec, supervisor stopwaitsecs) should be
	// longer than that; keep it above Abandon, which the release of
	// abandoned jobs spends from it. A worker that stops by itself (--once,
	// --max-jobs, ...) gives them WriteGrace after its last handler
	// returned. While the worker runs, writes are retried without limit.
	// Default 10s; negative: none.
	WriteGrace time.Duration
	// LaravelExact claims one job per claim and writes every outcome on
	// its own, as Laravel's worker does; with a database.Queue opened with
	// database.Options.ExactStatements, the statements are Laravel's own too.
	LaravelExact bool
	// Unrouted is what to do with jobs no handler is registered for.
	// Default UnroutedSkip.
	Unrouted Unrouted
	// LeaseEvery is how often running jobs' reservations are refreshed.
	// Default a third of the store's retry_after (at least a second).
	LeaseEvery time.Duration
	// Abandon is how long a handler that ignores its cancelled context is
	// waited for before it is abandoned and its job decided without it.
	// Default 5s.
	Abandon time.Duration
	// LaravelVersion is the app's Laravel version (e.g. "8.83"); it picks
	// the exception texts written to failed_jobs, and before 12.40 no
	// queue:pause key is read (Cache). Empty means 10.10+ (and pause keys
	// are read).
	LaravelVersion string

	// Logger receives the worker's logs. The zero value discards them.
	Logger zerolog.Logger
	// Metrics records Prometheus metrics; nil records nothing.
	Metrics *Metrics
	// TracerProvider, when set, traces every job attempt with
	// OpenTelemetry (docs/TRACING.md): a CONSUMER span named and
	// attributed as OpenTelemetry's PHP instrumentation for Laravel names
	// its own, child of the payload's traceparent, whose context the
	// handler's ctx holds, and which the jobs the worker pushes (the next
	// link of a chain, the bridge's hook jobs) carry on. Pass
	// otel.GetTracerProvider() for the global one. Nil (or a no-op
	// provider): no tracing, and no cost per job.
	TracerProvider trace.TracerProvider
	// Redact, when set, removes secrets from the exception messages a
	// span records (the CLI passes the app's secrets: passwords, APP_KEY,
	// tokens, in any escaping). Nil: messages go as they are.
	Redact func(string) string
	// Encrypter decrypts ShouldBeEncrypted commands (the app's APP_KEY);
	// nil fails such jobs with a message saying no key is configured.
	Encrypter *payload.Encrypter
	// App is the Laravel app handlers may reach through Job.App: its
	// configuration and database. Nil is allowed.
	App *handlers.App
	// Cache is the app's cache store as far as Go can share it (the
	// queue:restart signal, maxExceptions counters). Default: the store's
	// SharedCache (a database.Queue's on an app whose cache store is
	// "database"); nil: restart signals are not seen and counters are kept
	// in this process.
	Cache jobqueue.Cache
	// Batches is Laravel's batch repository (job_batches). Default: the
	// store's.
	Batches jobqueue.Batches
	// Exceptions holds maxExceptions counters. Default: counters in Cache,
	// else in this process's memory.
	Exceptions ExceptionCounter
	// Locks releases unique jobs' locks, by cache store name as
	// config/cache.php names the stores ("database", "redis"). Default:
	// the store's LockStores (a database.Queue's cache_locks as
	// "database"). A unique job whose store is missing here keeps its lock
	// (the worker says so once per class).
	Locks map[string]jobqueue.LockStore
	// CacheStore is the app's default cache store name (CACHE_STORE, or
	// CACHE_DRIVER before 11): where unique locks live unless the class's
	// uniqueVia() or the payload names another. Default: the store's
	// DefaultCacheStore.
	CacheStore string
	// Models looks up the rows of the models a job holds (the ones the
	// bridge recorded in its payload, or the registration names with
	// handlers.Models). Default: the store, when it has the optional
	// jobqueue.ModelLookup.
	Models handlers.ModelLookup
	// ModelsConnection is the database connection (config/database.php's
	// name) Models looks rows up in: a model the bridge recorded on
	// another connection is not looked up (the worker says so once per
	// class). "": every connection is that one.
	ModelsConnection string
	// Bridge is the laraworker bridge (bridge/, bridge/PROTOCOL.md) as the
	// app has it installed; nil: none. With its capabilities, what only
	// PHP can run after a job Go ran runs in PHP, through hook jobs the
	// store writes with the job's outcome onto the bridge's hooks queue
	// (the store must have been opened with one, Queue.HooksQueue, and
	// LaravelVersion set): the class's failed() and JobFailed listeners,
	// a failed chain link's catch callbacks, the batch callbacks a
	// success or failure triggers; and members of batches with callbacks
	// run in Go. Without it the worker says, at start and on each job,
	// what did not run.
	Bridge *bridgeproto.Bridge
	// StateStores are the app's cache stores where job middleware keep
	// their state (overlap locks, rate limiter counters), by
	// config/cache.php name ("database", "redis"). Default: the store's
	// (jobqueue.SharedState). A job whose middleware keeps its state in
	// a store missing here is given back to PHP workers.
	StateStores map[string]jobqueue.StateStore
	// DurationLimiters are the Redis DurationLimiters of the ...WithRedis
	// middleware, by Redis connection name ("default"). Default: the
	// store's (jobqueue.SharedState).
	DurationLimiters map[string]jobqueue.DurationLimiter
	// RunWithoutPHPMiddleware lists the classes whose jobs run in Go even
	// when part of their job middleware cannot run there (PHP code: a
	// custom middleware class, a closure, a callback; or state Go cannot
	// reach): Go applies the rest and logs, on each job, what it did not.
	// "*" is every class. By default such jobs are given back to PHP
	// workers untouched and the class is reported as a configuration
	// problem.
	RunWithoutPHPMiddleware []string
	// Written, when set, is called after each outcome's write landed (not
	// for outcomes dropped or lost): a dashboard's history counts jobs by
	// class with it. It must be quick and safe for concurrent use.
	Written func(job jobqueue.JobRow, o jobqueue.Outcome)
	// Ran, when set, is called when a job's run ends, before its outcome
	// is written (Written follows once the write lands): started is when
	// the worker took the job up, took how long until its outcome was
	// decided. A dashboard's runtimes and waits come from it. It must be
	// quick and safe for concurrent use.
	Ran func(job jobqueue.JobRow, started time.Time, took time.Duration)
	// BeforeClaim, when set, is called on the claim loop before each claim
	// and after each sleep while paused; it may call Pause, Resume and
	// PauseQueues (which hold for the claims after the call). It is where
	// pauses kept elsewhere are asked for: laraworker work starts the read
	// of the dashboard's pauses here, on a goroutine of its own, in the
	// wake-up of the claims they govern rather than on a timer of their
	// own, so an idle worker wakes once per poll, not twice. It runs
	// before every claim: it must return at once, never wait on I/O.
	// Default none.
	BeforeClaim func(ctx context.Context)
	// Observers are told when each job starts and how its run ended, with
	// the queue events Laravel's worker would have raised (JobObserver):
	// Laravel Pulse's recorders, tracers. Default none.
	Observers []JobObserver
	// Now is the clock (tests). Default time.Now.
	Now func() time.Time

	// clock replaces the real clock's timers too (the package's tests:
	// lease ticks, retries, probes and sleeps on a fake time). Its Now is
	// the default of Now.
	clock clock.Clock
}

// Unrouted is the policy for jobs that have no handler.
type Unrouted string

const (
	// UnroutedSkip never reserves a job without a handler (the default):
	// a shared queue stays safe for PHP workers.
	UnroutedSkip Unrouted = "skip"
	// UnroutedFail reserves every job and fails those without a handler.
	UnroutedFail Unrouted = "fail"
)

// ParseUnrouted reads the --unrouted flag.
func ParseUnrouted(s string) (Unrouted, error) {
	switch u := Unrouted(s); u {
	case UnroutedSkip, UnroutedFail:
		return u, nil
	}
	return "", fmt.Errorf(`--unrouted %q: want "skip" or "fail"`, s)
}

// Defaults of the fields artisan has flags for.
const (
	DefaultSleep       = 3 * time.Second
	DefaultIdlePoll    = time.Second
	DefaultMemoryMB    = 128
	DefaultTimeout     = 60 * time.Second
	DefaultTries       = 1
	DefaultConcurrency = 10
	DefaultGrace       = 30 * time.Second
	DefaultAbandon     = 5 * time.Second
	DefaultWriteGrace  = 10 * time.Second
)

// WithDefaults returns c with every zero field set to its default and
// "none" (negative) fields set to zero, the form the worker reads. store
// supplies the defaults that depend on it (Batches, Cache, Locks, ...);
// nil supplies none.
func (c Config) WithDefaults(store jobqueue.Store) Config {
	c.Name = orDefault(c.Name, "default")
	c.Sleep = durationOr(c.Sleep, DefaultSleep)
	c.IdlePoll = durationOr(c.IdlePoll, DefaultIdlePoll)
	c.Rest = max(c.Rest, 0)
	c.MaxJobs = max(c.MaxJobs, 0)
	c.MaxTime = max(c.MaxTime, 0)
	c.MemoryMB = intOr(c.MemoryMB, DefaultMemoryMB)
	c.Timeout = durationOr(c.Timeout, DefaultTimeout)
	c.Tries = intOr(c.Tries, DefaultTries)
	c.Backoff = orDefault(c.Backoff, "0")
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	c.Grace = durationOr(c.Grace, DefaultGrace)
	c.Abandon = durationOr(c.Abandon, DefaultAbandon)
	c.WriteGrace = durationOr(c.WriteGrace, DefaultWriteGrace)
	if c.Unrouted == "" {
		c.Unrouted = UnroutedSkip
	}
	if c.Now == nil && c.clock != nil {
		c.Now = c.clock.Now
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.clock == nil {
		c.clock = clock.System(c.Now)
	}
	if store == nil {
		return c // no store, no defaults from it
	}
	if c.Batches == nil {
		c.Batches = store
	}
	if c.Cache == nil {
		c.Cache = store.SharedCache()
	}
	c.withClassDefaults(store)
	return c
}

// withClassDefaults fills what the registrations' class declarations need:
// lock stores, the default cache store name, model lookups.
func (c *Config) withClassDefaults(store jobqueue.Store) {
	if c.Locks == nil {
		c.Locks = store.LockStores()
	}
	if c.CacheStore == "" {
		c.CacheStore = store.DefaultCacheStore()
	}
	if c.Models == nil {
		// Optional: a store without the app's database has none.
		if m, ok := store.(jobqueue.ModelLookup); ok {
			c.Models = m
		}
	}
	if c.StateStores == nil {
		c.StateStores = store.StateStores()
	}
	if c.DurationLimiters == nil {
		c.DurationLimiters = store.DurationLimiters()
	}
}

// validate rejects values no default can fix.
func (c Config) validate() error {
	switch {
	case c.Concurrency < 1:
		return errors.New("worker: Concurrency must be at least 1")
	case c.Unrouted != UnroutedSkip && c.Unrouted != UnroutedFail:
		return fmt.Errorf("worker: Unrouted %q: want %q or %q", c.Unrouted, UnroutedSkip, UnroutedFail)
	case c.LeaseEvery < 0:
		return errors.New("worker: LeaseEvery must not be negative")
	}
	return validBackoff(c.Backoff)
}

// validBackoff accepts what --backoff means to Laravel: whole seconds, or
// a comma-separated list of them. PHP would read "5s" or "1;5" as 0
// without a word; a worker must say so instead.
func validBackoff(s string) error {
	for _, part := range strings.Split(s, ",") {
		if _, err := strconv.ParseUint(strings.TrimSpace(part), 10, 32); err != nil {
			return fmt.Errorf("worker: Backoff %q: want whole seconds, or a list such as \"1,5,10\"", s)
		}
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// durationOr maps 0 to def and "none" (negative) to 0.
func durationOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// intOr maps 0 to def and "none" (negative) to 0.
func intOr(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// ParseQueues splits --queue like Worker::getNextJob: on commas, untrimmed.
func ParseQueues(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
