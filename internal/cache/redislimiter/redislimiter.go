// Package redislimiter is Laravel's Illuminate\Redis\Limiters\
// DurationLimiter from Go: the limiter the RateLimitedWithRedis and
// ThrottlesExceptionsWithRedis job middleware keep on a Redis connection,
// so that PHP and Go workers of one class count in the same window.
//
// A limiter is a hash at <connection prefix><key> with the fields start
// (the Unix second the window opened), end (start + decay) and count,
// expiring after twice the decay. Both operations are Lua scripts run in
// one step, as Laravel runs them, with the same arguments (the time as
// PHP's microtime(true) and time() pass it), so a window opened by either
// side is read alike by the other. The scripts' semantics are Laravel's
// (8.x to 13.x have the same), including their comparison of the time
// with start and end as strings.
package redislimiter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/redis/go-redis/v9"
)

// The scripts take KEYS[1], the hash, and ARGV: 1 the time with its
// fraction (microtime(true)), 2 the time in seconds (time()), 3 the decay
// in seconds, 4 the most acquisitions a window lets through.

// acquireScript opens a window (count 1) when there is none or the time
// is outside it, else counts one more in it; it answers {let through,
// window end, what remains}.
var acquireScript = redis.NewScript(`
local hash, now_micro, now, decay, most = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local function open_window()
    redis.call('HMSET', hash, 'start', now, 'end', now + decay, 'count', 1)
    return redis.call('EXPIRE', hash, decay * 2)
end

if redis.call('EXISTS', hash) == 0 then
    return {open_window(), now + decay, most - 1}
end

if now_micro >= redis.call('HGET', hash, 'start') and now_micro <= redis.call('HGET', hash, 'end') then
    local count = tonumber(redis.call('HINCRBY', hash, 'count', 1))
    return {count <= tonumber(most), redis.call('HGET', hash, 'end'), most - redis.call('HGET', hash, 'count')}
end

return {open_window(), now + decay, most - 1}
`)

// tooManyScript reads the window without counting: {window end, what
// remains}, or {0, now + decay} when there is no current window.
var tooManyScript = redis.NewScript(`
local hash, now_micro, now, decay, most = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]

if redis.call('EXISTS', hash) == 0 then
    return {0, now + decay}
end

if now_micro >= redis.call('HGET', hash, 'start') and now_micro <= redis.call('HGET', hash, 'end') then
    return {redis.call('HGET', hash, 'end'), most - redis.call('HGET', hash, 'count')}
end

return {0, now + decay}
`)

// Limiter is the DurationLimiters of one Redis connection.
type Limiter struct {
	rdb    redis.UniversalClient
	prefix string
	now    func() time.Time
}

// New is the limiters on rdb, whose keys the PHP client prefixes with
// prefix (the connection's options.prefix); now is the clock (nil:
// time.Now).
func New(rdb redis.UniversalClient, prefix string, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{rdb: rdb, prefix: prefix, now: now}
}

var _ jobqueue.DurationLimiter = (*Limiter)(nil)

// Key is the Redis key of a limiter.
func (l *Limiter) Key(key string) string { return l.prefix + key }

// Acquire is DurationLimiter::acquire.
func (l *Limiter) Acquire(ctx context.Context, key string, maxLocks, decaySeconds int64) (jobqueue.DurationWindow, error) {
	res, err := l.run(ctx, acquireScript, key, maxLocks, decaySeconds)
	if err != nil {
		return jobqueue.DurationWindow{}, err
	}
	if len(res) != 3 {
		return jobqueue.DurationWindow{}, fmt.Errorf("redislimiter: acquire answered %d values", len(res))
	}
	w := jobqueue.DurationWindow{Acquired: truthy(res[0])}
	if w.DecaysAt, err = integer(res[1]); err == nil {
		w.Remaining, err = integer(res[2])
	}
	w.Remaining = max(w.Remaining, 0)
	return w, err
}

// TooManyAttempts is DurationLimiter::tooManyAttempts; the window's
// TooMany() is its answer.
func (l *Limiter) TooManyAttempts(ctx context.Context, key string, maxLocks, decaySeconds int64) (jobqueue.DurationWindow, error) {
	res, err := l.run(ctx, tooManyScript, key, maxLocks, decaySeconds)
	if err != nil {
		return jobqueue.DurationWindow{}, err
	}
	if len(res) != 2 {
		return jobqueue.DurationWindow{}, fmt.Errorf("redislimiter: tooManyAttempts answered %d values", len(res))
	}
	var w jobqueue.DurationWindow
	if w.DecaysAt, err = integer(res[0]); err == nil {
		w.Remaining, err = integer(res[1])
	}
	return w, err
}

// Clear is DurationLimiter::clear.
func (l *Limiter) Clear(ctx context.Context, key string) error {
	return wrap(l.rdb.Del(ctx, l.Key(key)).Err())
}

func (l *Limiter) run(ctx context.Context, s *redis.Script, key string, maxLocks, decaySeconds int64) ([]any, error) {
	t := l.now()
	res, err := s.Run(ctx, l.rdb, []string{l.Key(key)}, microtime(t), t.Unix(), decaySeconds, maxLocks).Slice()
	return res, wrap(err)
}

// microtime is microtime(true) as PHP passes a float to Redis: its
// string form, with PHP's default precision of 14 significant digits.
func microtime(t time.Time) string {
	f := float64(t.UnixMicro()) / 1e6
	return strconv.FormatFloat(f, 'g', 14, 64)
}

// truthy is PHP's (bool) of a script's first answer: Lua's true is 1,
// its false a nil reply.
func truthy(v any) bool {
	switch x := v.(type) {
	case int64:
		return x != 0
	case string:
		return x != "" && x != "0"
	}
	return false
}

// integer reads a number the script answered as an integer or as the
// hash's string.
func integer(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(x, 64)
			if ferr != nil {
				return 0, fmt.Errorf("redislimiter: %q is not a number", x)
			}
			return int64(f), nil
		}
		return n, nil
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("redislimiter: unexpected %T in the script's answer", v)
}

func wrap(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	return fmt.Errorf("redis limiter: %w", err)
}
