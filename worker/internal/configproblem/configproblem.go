// Package configproblem keeps the worker's configuration problems. A
// configuration problem is a failure the worker's own setup causes: no
// APP_KEY or the wrong one, a table that does not exist, a permission the
// database user lacks. Retrying the job cannot help and failing it would
// be wrong (PHP workers, correctly configured, run it): the job is given
// back untouched, what cannot be handled is no longer claimed, the
// problem is logged loudly once a minute, Health reports it and a metric
// counts it. It ends when a claim succeeds again, or, for a key problem,
// when the key decrypts a command: the class is claimed again a minute
// later (KeyProbeEvery) to find out.
package configproblem

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
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
)

// Error is a configuration problem, as the worker's Health reports it.
type Error struct {
	Kind  string // "app_key", "schema", "permission", "middleware", "debounce"
	Class string // the job class it stopped, for app_key and middleware
	Err   error
	Since time.Time
	// blockedUntil: the class is not claimed until then; a claim after it
	// probes whether the problem is still there.
	blockedUntil time.Time
}

func (e *Error) Error() string {
	if e.Class != "" {
		return fmt.Sprintf("%s: jobs of %s are not claimed: %v", e.Kind, e.Class, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Kinds of configuration problems.
const (
	KindAppKey     = "app_key"
	KindSchema     = "schema"
	KindPermission = "permission"
	// KindMiddleware: a class's job middleware cannot be applied in Go
	// (package jobmiddleware).
	KindMiddleware = "middleware"
	// KindDebounce: a #[DebounceFor] class's owner key is in a store Go
	// cannot read, or Go cannot compute the key.
	KindDebounce = "debounce"
)

// Kinds are every kind of configuration problem.
var Kinds = []string{KindAppKey, KindSchema, KindPermission, KindMiddleware, KindDebounce}

// configLogEvery is how often a persisting problem is logged again.
const configLogEvery = time.Minute

// KeyProbeEvery is how long a class stays unclaimed after a key problem;
// then one claim probes again (the job it meets may decrypt: the first
// failure may have been one tampered job, not the key).
const KeyProbeEvery = time.Minute

// Problems are the problems met so far: the producer stops claiming the
// classes they block, executors report key problems, the completer
// reports the store's, the worker's Health lists them.
type Problems struct {
	log zerolog.Logger
	// counted counts each problem reported, by kind (a metric).
	counted func(kind string)
	clock   clock.Clock
	// keyVerified: the key has decrypted a command.
	keyVerified atomic.Bool

	// changed, when set, is called after each change to the problems
	// (the producer keeps its claim filter until one).
	changed func()

	mu       sync.Mutex
	problems map[string]*Error // by kind and class
	logged   map[string]time.Time
}

// New keeps the problems reported; counted, when set, counts each by
// kind; changed, when set, is called after each report and each clearing
// (under the problems' lock: it must not call them).
func New(log zerolog.Logger, counted func(kind string), changed func(), c clock.Clock) *Problems {
	return &Problems{log: log, counted: counted, changed: changed, clock: c}
}

// change tells whoever asked (New's changed); the caller holds mu.
func (c *Problems) change() {
	if c.changed != nil {
		c.changed()
	}
}

// Report records a problem, logs it at most once a minute, counts it.
func (c *Problems) Report(e *Error) {
	now := c.clock.Now()
	e.Since = now
	e.blockedUntil = now.Add(KeyProbeEvery)
	if c.counted != nil {
		c.counted(e.Kind)
	}
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
func (c *Problems) record(e *Error, now time.Time) (logNow bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.problems == nil {
		c.problems, c.logged = map[string]*Error{}, map[string]time.Time{}
	}
	key := e.Kind + "\x00" + e.Class
	if old, ok := c.problems[key]; ok {
		e.Since = old.Since
	}
	c.problems[key] = e
	c.change()
	if last, ok := c.logged[key]; ok && now.Sub(last) < configLogEvery {
		return false
	}
	c.logged[key] = now
	return true
}

// SetupProblem reports a store error that the app's setup causes (a
// missing table, a missing permission) as a configuration problem, and
// says whether it was one.
func (c *Problems) SetupProblem(err error) bool {
	switch {
	case errors.Is(err, jobqueue.ErrMissingTable):
		c.Report(&Error{Kind: KindSchema, Err: err})
	case errors.Is(err, jobqueue.ErrPermissionDenied):
		c.Report(&Error{Kind: KindPermission, Err: err})
	default:
		return false
	}
	return true
}

// Clear drops the problems of these kinds (a claim that works again).
func (c *Problems) Clear(kinds ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, p := range c.problems {
		if slices.Contains(kinds, p.Kind) {
			delete(c.problems, key)
			delete(c.logged, key)
			c.change()
		}
	}
}

// ClearClass drops the problem of this kind for one class (its jobs run
// again).
func (c *Problems) ClearClass(kind, class string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := kind + "\x00" + class
	if _, ok := c.problems[key]; ok {
		delete(c.problems, key)
		delete(c.logged, key)
		c.change()
	}
}

// BlockedClasses are the classes not claimed now because of a problem;
// until is when the first of their blocks ends (zero when none is
// blocked).
func (c *Problems) BlockedClasses(now time.Time) (out []string, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.problems {
		if p.Class != "" && now.Before(p.blockedUntil) {
			out = append(out, p.Class)
			if until.IsZero() || p.blockedUntil.Before(until) {
				until = p.blockedUntil
			}
		}
	}
	sort.Strings(out)
	return out, until
}

// All lists the problems, sorted.
func (c *Problems) All() []*Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Error, 0, len(c.problems))
	for _, p := range c.problems {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Error() < out[j].Error() })
	return out
}

// configAdvice says what to fix, for the log line.
func configAdvice(e *Error) string {
	switch e.Kind {
	case KindAppKey:
		return "the job's command cannot be decrypted with this APP_KEY (check APP_KEY, APP_PREVIOUS_KEYS, APP_CIPHER); its jobs are left to PHP workers; the class is claimed again in a minute to check the key"
	case KindSchema:
		return "a table is missing (php artisan queue:table / queue:failed-table / queue:batches-table, or laraworker tables); retrying"
	case KindPermission:
		return "the database user lacks a permission on the queue tables; retrying"
	case KindMiddleware:
		return "its jobs are left to PHP workers; the class is claimed again in a minute"
	case KindDebounce:
		return "Go cannot tell whether a newer dispatch superseded its jobs (#[DebounceFor]): they are left to PHP workers; the class is claimed again in a minute"
	}
	return "retrying"
}

// IsKeyProblem tells a command that cannot be decrypted because of this
// worker's key from a damaged one, which PHP would fail too. No key at all
// is always the worker's problem. A MAC that does not match is the key's
// problem until the key has decrypted some command: after that, it is
// this job's (tampered, or encrypted by another app), as PHP sees it.
func (c *Problems) IsKeyProblem(err error) bool {
	if errors.Is(err, payload.ErrEncrypted) || errors.Is(err, payload.ErrMissingAppKey) {
		return true
	}
	wrongKey := errors.Is(err, payload.ErrDecryptMACInvalid) || errors.Is(err, payload.ErrDecryptFailed)
	return wrongKey && !c.keyVerified.Load()
}

// KeyWorks records that the key decrypted a command: key problems met
// so far were the jobs', and their classes may be claimed again.
func (c *Problems) KeyWorks() {
	if !c.keyVerified.Swap(true) {
		c.Clear(KindAppKey)
	}
}

// WithoutBlocked removes the classes a problem stopped from names.
func WithoutBlocked(names, blocked []string) []string {
	if len(blocked) == 0 {
		return names
	}
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool {
		return slices.ContainsFunc(blocked, func(b string) bool { return strings.EqualFold(b, n) })
	})
}
