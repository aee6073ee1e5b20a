package jobmiddleware

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/worker/internal/onceset"
	"github.com/rs/zerolog"
)

// Plan is what one job runs through, outermost first.
type Plan struct {
	Steps []Step
	// From says where the list came from: "payload" or "registration".
	From string
	// Skipped names what Go does not apply (the class opted in to running
	// without it).
	Skipped []string
}

// Step is one middleware with what applying it takes.
type Step struct {
	m bridgeproto.Middleware
	// cache and locks are the cache store's sides (cache-backed types);
	// limiter the Redis connection's DurationLimiter (...WithRedis).
	cache   jobqueue.Cache
	locks   jobqueue.LockStore
	limiter jobqueue.DurationLimiter
	// lockSeconds is WithoutOverlapping's lock lifetime, the store's
	// default for 0 resolved (the database store's lock timeout).
	lockSeconds int64
}

// Resolver resolves a job's middleware to a Plan on the stores the
// middleware reach, and remembers what the worker says once per class.
type Resolver struct {
	Stores   map[string]jobqueue.StateStore
	Limiters map[string]jobqueue.DurationLimiter
	// DefaultStore is the app's default cache store (WithoutOverlapping's,
	// and the RateLimiter's for registrations).
	DefaultStore string
	// Version is the app's Laravel version (it shapes the keys).
	Version string
	// OptIn lists the classes that run without the middleware Go cannot
	// apply ("*": every class).
	OptIn []string
	Log   zerolog.Logger

	said onceset.Set
}

// OnceFor reports whether topic + "\x00" + name is said for the first
// time (bounded, as a worker meets an unbounded number of classes),
// without building the key on every call.
func (d *Resolver) OnceFor(topic, name string) bool { return d.said.OnceFor(topic, name) }

// OptedIn reports whether the class runs without the middleware Go
// cannot apply.
func (d *Resolver) OptedIn(class string) bool {
	return slices.ContainsFunc(d.OptIn, func(c string) bool { return c == "*" || strings.EqualFold(c, class) })
}

// CheckRegistrations runs when the worker is built: every store and Redis connection the
// registrations' middleware name must be reachable, and the app's Laravel
// version known (it shapes the keys); each class's middleware is named.
func (d *Resolver) CheckRegistrations(reg *handlers.Registry) error {
	declared := reg.Middleware()
	classes := make([]string, 0, len(declared))
	for class := range declared {
		classes = append(classes, class)
	}
	sort.Strings(classes)
	for _, class := range classes {
		if d.Version == "" {
			return fmt.Errorf("worker: %s declares job middleware: set LaravelVersion (work --laravel-version) so its keys are the ones the app's Laravel writes", class)
		}
		var names []string
		for _, m := range declared[class] {
			if err := d.checkDeclared(m); err != nil {
				return fmt.Errorf("worker: %s: %s: %w", class, m.Type, err)
			}
			names = append(names, d.describeDeclared(m))
		}
		d.Log.Info().Str("class", class).Strs("middleware", names).Msg("job middleware applied by Go, sharing its state with PHP workers")
	}
	for _, class := range d.OptIn {
		d.Log.Warn().Str("class", class).Msg("jobs of this class run in Go even when part of their job middleware is PHP code or lives where Go cannot reach it (RunWithoutPHPMiddleware); each such job is logged")
	}
	return nil
}

func (d *Resolver) checkDeclared(m handlers.JobMiddleware) error {
	switch m.Type {
	case handlers.TypeWithoutOverlapping:
		if m.Shared && appconfig.VersionCompare(d.Version, "9.32") < 0 {
			return fmt.Errorf("shared() is Laravel 9.32+; the app runs %s", d.Version)
		}
		_, err := d.store(d.DefaultStore, bridgeproto.Store{}, true)
		return err
	case handlers.TypeRateLimited, handlers.TypeThrottlesExceptions:
		if m.Type == handlers.TypeRateLimited && m.ReleaseAfter != nil && appconfig.VersionCompare(d.Version, "12.13") < 0 {
			return fmt.Errorf("releaseAfter() is Laravel 12.13+; the app runs %s", d.Version)
		}
		_, err := d.store(d.DefaultStore, bridgeproto.Store{}, false)
		return err
	case handlers.TypeRateLimitedWithRedis, handlers.TypeThrottlesExceptionsWithRedis:
		_, err := d.limiter(redisConnectionOf(m.Connection))
		return err
	}
	return nil
}

func (d *Resolver) describeDeclared(m handlers.JobMiddleware) string {
	switch m.Type {
	case handlers.TypeWithoutOverlapping, handlers.TypeThrottlesExceptions:
		return m.Type + " (" + d.DefaultStore + " cache store)"
	case handlers.TypeRateLimited:
		return m.Type + " " + m.Limiter + " (" + d.DefaultStore + " cache store)"
	case handlers.TypeRateLimitedWithRedis:
		return m.Type + " " + m.Limiter + " (redis connection " + redisConnectionOf(m.Connection) + ")"
	case handlers.TypeThrottlesExceptionsWithRedis:
		return m.Type + " (redis connection " + redisConnectionOf(m.Connection) + ")"
	}
	return m.Type
}

func redisConnectionOf(name string) string {
	if name == "" {
		return "default"
	}
	return name
}

// store is the named cache store as Go reaches it, checked against what
// the bridge recorded of it (when it did): the same driver, and for the
// database store the same tables. needLocks: the lock side is needed,
// else the values' side.
func (d *Resolver) store(name string, recorded bridgeproto.Store, needLocks bool) (jobqueue.StateStore, error) {
	s, ok := d.Stores[name]
	driver := recorded.Driver
	if driver == "" {
		driver = "unknown"
	}
	switch {
	case name == "":
		return s, errors.New("the app's default cache store is not known (CACHE_STORE, or CACHE_DRIVER before Laravel 11)")
	case !ok && recorded.Driver != "" && recorded.Driver != "database" && recorded.Driver != "redis":
		return s, fmt.Errorf("its state is in the app's %q cache store (driver %s), which Go cannot reach: only database and redis stores are shared", name, driver)
	case !ok:
		return s, fmt.Errorf("its state is in the app's %q cache store (driver %s), which this worker was not given (Config.StateStores)", name, driver)
	case recorded.Driver != "" && s.Driver != "" && recorded.Driver != s.Driver:
		return s, fmt.Errorf("the app's %q cache store has driver %s, the one this worker reaches under that name %s", name, recorded.Driver, s.Driver)
	case s.Driver == "database" && recorded.Table != "" && s.Table != "" && recorded.Table != s.Table:
		return s, fmt.Errorf("the app's %q cache store uses the table %s, this worker %s", name, recorded.Table, s.Table)
	case s.Driver == "database" && recorded.LockTable != "" && s.LockTable != "" && recorded.LockTable != s.LockTable:
		return s, fmt.Errorf("the app's %q cache store takes its locks in the table %s, this worker %s", name, recorded.LockTable, s.LockTable)
	case needLocks && s.Locks == nil:
		return s, fmt.Errorf("this worker does not reach the locks of the app's %q cache store", name)
	case !needLocks && s.Cache == nil:
		return s, fmt.Errorf("this worker reaches only the locks of the app's %q cache store, not its values", name)
	}
	return s, nil
}

// limiter is the DurationLimiter on a Redis connection.
func (d *Resolver) limiter(connection string) (jobqueue.DurationLimiter, error) {
	if l, ok := d.Limiters[connection]; ok && l != nil {
		return l, nil
	}
	return nil, fmt.Errorf("its state is on the app's redis connection %q, which this worker was not given (Config.DurationLimiters)", connection)
}

// lockSeconds is a WithoutOverlapping lock's lifetime for expiresAfter:
// on the database store 0 is the store's lock timeout (as recorded, else
// the worker's store's, else Laravel's day).
func lockSeconds(expiresAfter int64, s jobqueue.StateStore, recorded bridgeproto.Store) int64 {
	if expiresAfter > 0 || s.Driver != "database" {
		return expiresAfter
	}
	if recorded.LockTimeout > 0 {
		return recorded.LockTimeout
	}
	if s.LockTimeout > 0 {
		return s.LockTimeout
	}
	return 86400
}

// NotAppliedError is the error of a job given back because Go cannot
// apply its middleware.
type NotAppliedError struct {
	Class string
	What  []string
}

func (e *NotAppliedError) Error() string {
	return fmt.Sprintf("%s has job middleware Go cannot apply: %s; its jobs are left to PHP workers (list the class in RunWithoutPHPMiddleware, work --run-without-php-middleware, to run them in Go without it)",
		e.Class, strings.Join(e.What, "; "))
}

// PlanFromRecord is the plan of the middleware the bridge recorded.
func (d *Resolver) PlanFromRecord(meta *bridgeproto.Metadata) (Plan, []string) {
	plan := Plan{From: "payload"}
	var problems []string
	for _, e := range meta.Errors {
		if part, _, _ := strings.Cut(e, ":"); part == "middleware" || part == "middleware()" || part == "metadata" {
			problems = append(problems, "the bridge could not record the middleware ("+e+")")
		}
	}
	named := map[string]bool{}
	for _, m := range meta.Middleware {
		step, err := d.recordedStep(m, meta.Stores)
		if err != nil {
			problems = append(problems, m.Class+": "+err.Error())
			named[m.Class] = true
			continue
		}
		plan.Steps = append(plan.Steps, step)
	}
	for _, c := range meta.NotCarried {
		if !named[c] {
			problems = append(problems, c+": PHP code")
		}
	}
	return plan, problems
}

// recordedStep resolves one recorded middleware.
func (d *Resolver) recordedStep(m bridgeproto.Middleware, stores map[string]bridgeproto.Store) (Step, error) {
	step := Step{m: m}
	switch m.Type {
	case handlers.TypeWithoutOverlapping:
		s, err := d.store(m.Store, stores[m.Store], true)
		if err != nil {
			return step, err
		}
		step.locks, step.lockSeconds = s.Locks, lockSeconds(m.ExpiresAfter, s, stores[m.Store])
	case handlers.TypeRateLimited, handlers.TypeThrottlesExceptions:
		if m.Type == handlers.TypeRateLimited && (!m.Registered || m.Unlimited) {
			return step, nil // runs the job: no store needed
		}
		s, err := d.store(m.Store, stores[m.Store], false)
		if err != nil {
			return step, err
		}
		step.cache = s.Cache
	case handlers.TypeRateLimitedWithRedis, handlers.TypeThrottlesExceptionsWithRedis:
		if m.Type == handlers.TypeRateLimitedWithRedis && (!m.Registered || m.Unlimited) {
			return step, nil
		}
		l, err := d.limiter(redisConnectionOf(m.RedisConnection))
		if err != nil {
			return step, err
		}
		step.limiter = l
	case "Skip", handlers.TypeSkipIfBatchCancelled, "Release":
	case "other":
		return step, errors.New(orString(m.Reason, "PHP code"))
	default:
		return step, fmt.Errorf("a middleware type this laraworker does not know (%q): update laraworker", m.Type)
	}
	return step, nil
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Describe names a plan's middleware for the logs.
func (p Plan) Describe() []string {
	out := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.m.Type
		switch {
		case s.m.CacheKey != "":
			out[i] += " " + s.m.CacheKey
		case s.m.Key != "":
			out[i] += " " + s.m.Key
		case s.m.Limiter != "":
			out[i] += " " + s.m.Limiter
		}
	}
	return out
}
