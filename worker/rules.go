package worker

import (
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
)

// Laravel's attempt rules (Worker::process and friends), as pure functions
// of the payload, the attempts column and the configuration (after
// WithDefaults: Tries 0 means unlimited, Timeout 0 none).

// maxTries is `payload.maxTries ?? --tries`.
func (c Config) maxTries(p *payload.Payload) int64 {
	if p.MaxTries != nil {
		return *p.MaxTries
	}
	return int64(c.Tries)
}

// alreadyExceeded is markJobAsFailedIfAlreadyExceedsMaxAttempts: true when
// the job must fail before running. retryUntil, when set, replaces the
// tries check entirely.
func (c Config) alreadyExceeded(p *payload.Payload, attempts int64, now time.Time) bool {
	if p.RetryUntil != nil {
		return now.Unix() > *p.RetryUntil
	}
	max := c.maxTries(p)
	return max != 0 && attempts > max
}

// willExceed is markJobAsFailedIfWillExceedMaxAttempts: after an
// exception, true when this was the last allowed attempt.
func (c Config) willExceed(p *payload.Payload, attempts int64, now time.Time) bool {
	if p.RetryUntil != nil {
		return *p.RetryUntil <= now.Unix()
	}
	max := c.maxTries(p)
	return max > 0 && attempts >= max
}

// backoff is calculateBackoff: the payload's backoff (or its delay, as
// Job::backoff() reads it), else --backoff, indexed by attempts-1 and
// clamped to the last element.
func (c Config) backoff(p *payload.Payload, attempts int64) time.Duration {
	return time.Duration(p.BackoffFor(attempts, c.Backoff)) * time.Second
}

// timeout is `payload.timeout ?? --timeout`; 0 means none.
func (c Config) timeout(p *payload.Payload) time.Duration {
	if p.Timeout != nil {
		return time.Duration(*p.Timeout) * time.Second
	}
	return c.Timeout
}
