package worker

import (
	"strconv"
	"sync"
	"time"

	"github.com/laraworker/laraworker/payload"
)

// Laravel's attempt rules (Worker::process and friends), as pure functions
// of the payload, the attempts column and the options.

// maxTries is `payload.maxTries ?? --tries`.
func (o Options) maxTries(p *payload.Payload) int64 {
	if p.MaxTries != nil {
		return *p.MaxTries
	}
	return int64(o.Tries)
}

// alreadyExceeded is markJobAsFailedIfAlreadyExceedsMaxAttempts: true when
// the job must fail before running. retryUntil, when set, replaces the
// tries check entirely.
func (o Options) alreadyExceeded(p *payload.Payload, attempts int64, now time.Time) bool {
	if p.RetryUntil != nil {
		return now.Unix() > *p.RetryUntil
	}
	max := o.maxTries(p)
	return max != 0 && attempts > max
}

// willExceed is markJobAsFailedIfWillExceedMaxAttempts: after an
// exception, true when this was the last allowed attempt.
func (o Options) willExceed(p *payload.Payload, attempts int64, now time.Time) bool {
	if p.RetryUntil != nil {
		return *p.RetryUntil <= now.Unix()
	}
	max := o.maxTries(p)
	return max > 0 && attempts >= max
}

// backoff is calculateBackoff: the payload's backoff (or its delay, as
// Job::backoff() reads it), else --backoff, indexed by attempts-1 and
// clamped to the last element.
func (o Options) backoff(p *payload.Payload, attempts int64) time.Duration {
	def := o.Backoff
	if def == "" {
		def = "0"
	}
	return time.Duration(p.BackoffFor(attempts, def)) * time.Second
}

// timeout is `payload.timeout ?? --timeout`; 0 means none.
func (o Options) timeout(p *payload.Payload) time.Duration {
	if p.Timeout != nil {
		return time.Duration(*p.Timeout) * time.Second
	}
	return o.Timeout
}

// ExceptionCounter stores maxExceptions counters by job uuid, as
// Laravel's `job-exceptions:<uuid>` cache keys do.
type ExceptionCounter interface {
	// Increment adds one and returns the new count.
	Increment(uuid string) int64
	// Forget drops the counter.
	Forget(uuid string)
}

// memoryCounter is an ExceptionCounter for one process; entries expire
// after a day, as Laravel's do.
type memoryCounter struct {
	mu sync.Mutex
	m  map[string]counterEntry
}

type counterEntry struct {
	n       int64
	expires time.Time
}

func newMemoryCounter() *memoryCounter { return &memoryCounter{m: map[string]counterEntry{}} }

func (c *memoryCounter) Increment(uuid string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	e := c.m[uuid]
	if e.expires.Before(now) {
		e = counterEntry{expires: now.Add(24 * time.Hour)}
	}
	e.n++
	c.m[uuid] = e
	if len(c.m) > 100000 {
		c.sweep(now)
	}
	return e.n
}

func (c *memoryCounter) Forget(uuid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, uuid)
}

func (c *memoryCounter) sweep(now time.Time) {
	for k, e := range c.m {
		if e.expires.Before(now) {
			delete(c.m, k)
		}
	}
}

// exceedsMaxExceptions is markJobAsFailedIfWillExceedMaxExceptions: counts
// this exception and reports whether maxExceptions is reached.
func exceedsMaxExceptions(c ExceptionCounter, p *payload.Payload) bool {
	if p.MaxExceptions == nil || p.UUID == "" {
		return false
	}
	n := c.Increment(p.UUID)
	if *p.MaxExceptions <= n {
		c.Forget(p.UUID)
		return true
	}
	return false
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
