package worker

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/payload"
	"github.com/rs/zerolog"
)

// A configuration problem is a failure the worker's own setup causes: no
// APP_KEY or the wrong one, a table that does not exist, a permission the
// database user lacks. Retrying the job cannot help and failing it would
// be wrong (PHP workers, correctly configured, run it): the job is given
// back untouched, what cannot be handled is no longer claimed, the
// problem is logged loudly once a minute, Health reports it and a metric
// counts it. It ends when a claim succeeds again, or, for a key problem,
// when the key decrypts a command: the class is claimed again a minute
// later (keyProbeEvery) to find out.

// ConfigError is a configuration problem, as Health reports it.
type ConfigError struct {
	Kind  string // "app_key", "schema", "permission", "middleware"
	Class string // the job class it stopped, for app_key and middleware
	Err   error
	Since time.Time
	// blockedUntil: the class is not claimed until then; a claim after it
	// probes whether the problem is still there.
	blockedUntil time.Time
}

func (e *ConfigError) Error() string {
	if e.Class != "" {
		return fmt.Sprintf("%s: jobs of %s are not claimed: %v", e.Kind, e.Class, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Kind, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Kinds of configuration problems.
const (
	kindAppKey     = "app_key"
	kindSchema     = "schema"
	kindPermission = "permission"
	// kindMiddleware: a class's job middleware cannot be applied in Go
	// (middleware.go).
	kindMiddleware = "middleware"
)

// configLogEvery is how often a persisting problem is logged again.
const configLogEvery = time.Minute

// keyProbeEvery is how long a class stays unclaimed after a key problem;
// then one claim probes again (the job it meets may decrypt: the first
// failure may have been one tampered job, not the key).
const keyProbeEvery = time.Minute

// configProblems are the problems met so far: the producer stops claiming
// the classes they block, executors report key problems, the completer
// reports the store's, Health lists them.
type configProblems struct {
	log     zerolog.Logger
	metrics *Metrics
	clock   clock.Clock
	// keyVerified: the key has decrypted a command.
	keyVerified atomic.Bool

	mu       sync.Mutex
	problems map[string]*ConfigError // by kind and class
	logged   map[string]time.Time
}

// report records a problem, logs it at most once a minute, counts it.
func (c *configProblems) report(e *ConfigError) {
	now := c.clock.Now()
	e.Since = now
	e.blockedUntil = now.Add(keyProbeEvery)
	c.metrics.configError(e.Kind)
	if c.record(e, now) {
		ev := c.log.Error().Str("kind", e.Kind).Err(e.Err).Time("since", e.Since)
		if e.Class != "" {
			ev = ev.Str("class", e.Class)
		}
		ev.Msg("configuration problem: " + configAdvice(e))
	}
}

// record keeps e (since the first report of its kind and class); it
// reports whether it is time to log it.
func (c *configProblems) record(e *ConfigError, now time.Time) (logNow bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.problems == nil {
		c.problems, c.logged = map[string]*ConfigError{}, map[string]time.Time{}
	}
	key := e.Kind + "\x00" + e.Class
	if old, ok := c.problems[key]; ok {
		e.Since = old.Since
	}
	c.problems[key] = e
	if last, ok := c.logged[key]; ok && now.Sub(last) < configLogEvery {
		return false
	}
	c.logged[key] = now
	return true
}

// setupProblem reports a store error that the app's setup causes (a
// missing table, a missing permission) as a configuration problem, and
// says whether it was one.
func (c *configProblems) setupProblem(err error) bool {
	switch {
	case errors.Is(err, jobqueue.ErrMissingTable):
		c.report(&ConfigError{Kind: kindSchema, Err: err})
	case errors.Is(err, jobqueue.ErrPermissionDenied):
		c.report(&ConfigError{Kind: kindPermission, Err: err})
	default:
		return false
	}
	return true
}

// clear drops the problems of these kinds (a claim that works again).
func (c *configProblems) clear(kinds ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, p := range c.problems {
		if slices.Contains(kinds, p.Kind) {
			delete(c.problems, key)
			delete(c.logged, key)
		}
	}
}

// clearClass drops the problem of this kind for one class (its jobs run
// again).
func (c *configProblems) clearClass(kind, class string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := kind + "\x00" + class
	if _, ok := c.problems[key]; ok {
		delete(c.problems, key)
		delete(c.logged, key)
	}
}

// blockedClasses are the classes not claimed now because of a problem.
func (c *configProblems) blockedClasses(now time.Time) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, p := range c.problems {
		if p.Class != "" && now.Before(p.blockedUntil) {
			out = append(out, p.Class)
		}
	}
	sort.Strings(out)
	return out
}

func (c *configProblems) all() []*ConfigError {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*ConfigError, 0, len(c.problems))
	for _, p := range c.problems {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Error() < out[j].Error() })
	return out
}

// Health is nil while the worker can do its work, else every
// configuration problem it has met (a /healthz endpoint turns unhealthy).
func (w *Worker) Health() error {
	var errs []error
	for _, p := range w.problems.all() {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// configAdvice says what to fix, for the log line.
func configAdvice(e *ConfigError) string {
	switch e.Kind {
	case kindAppKey:
		return "the job's command cannot be decrypted with this APP_KEY (check APP_KEY, APP_PREVIOUS_KEYS, APP_CIPHER); its jobs are left to PHP workers; the class is claimed again in a minute to check the key"
	case kindSchema:
		return "a table is missing (php artisan queue:table / queue:failed-table / queue:batches-table, or laraworker tables); retrying"
	case kindPermission:
		return "the database user lacks a permission on the queue tables; retrying"
	case kindMiddleware:
		return "its jobs are left to PHP workers; the class is claimed again in a minute"
	}
	return "retrying"
}

// isKeyProblem tells a command that cannot be decrypted because of this
// worker's key from a damaged one, which PHP would fail too. No key at all
// is always the worker's problem. A MAC that does not match is the key's
// problem until the key has decrypted some command: after that, it is
// this job's (tampered, or encrypted by another app), as PHP sees it.
func (c *configProblems) isKeyProblem(err error) bool {
	if errors.Is(err, payload.ErrEncrypted) || errors.Is(err, payload.ErrMissingAppKey) {
		return true
	}
	wrongKey := errors.Is(err, payload.ErrDecryptMACInvalid) || errors.Is(err, payload.ErrDecryptFailed)
	return wrongKey && !c.keyVerified.Load()
}

// keyWorks records that the key decrypted a command: key problems met
// so far were the jobs', and their classes may be claimed again.
func (c *configProblems) keyWorks() {
	if !c.keyVerified.Swap(true) {
		c.clear(kindAppKey)
	}
}

// withoutBlocked removes the classes a problem stopped from names.
func withoutBlocked(names, blocked []string) []string {
	if len(blocked) == 0 {
		return names
	}
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool {
		return slices.ContainsFunc(blocked, func(b string) bool { return strings.EqualFold(b, n) })
	})
}
