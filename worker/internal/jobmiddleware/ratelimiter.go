package jobmiddleware

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/phpserialize"
)

// RateLimiter is Illuminate\Cache\RateLimiter on one cache store, for the
// keys the RateLimited and ThrottlesExceptions middleware use: a counter
// at key and, at key + ":timer", the Unix time its window ends. Keys are
// whole (the store's prefix included) and already cleaned
// (cleanRateLimiterKey), as the bridge records them.
type RateLimiter struct {
	Cache jobqueue.CacheStore
	Now   func() time.Time
}

const timerSuffix = ":timer"

// TooManyAttempts is RateLimiter::tooManyAttempts: the count has reached
// maxAttempts and the window is still open. A count at the maximum whose
// window is gone is reset.
func (r RateLimiter) TooManyAttempts(ctx context.Context, key string, maxAttempts int64) (bool, error) {
	attempts, err := r.get(ctx, key)
	if err != nil || attempts < maxAttempts {
		return false, err
	}
	_, open, err := r.Cache.Get(ctx, key+timerSuffix)
	if err != nil || open {
		return open, err
	}
	return false, r.Cache.Forget(ctx, key)
}

// Hit is RateLimiter::hit: the window's timer and the counter are added
// when missing, the counter is incremented, and a counter that expired
// between the add and the increment is put back at 1.
func (r RateLimiter) Hit(ctx context.Context, key string, decaySeconds int64) (int64, error) {
	ttl := time.Duration(decaySeconds) * time.Second
	availableAt := r.Now().Unix() + decaySeconds
	if _, err := r.Cache.Add(ctx, key+timerSuffix, phpInt(availableAt), ttl); err != nil {
		return 0, err
	}
	added, err := r.Cache.Add(ctx, key, phpInt(0), ttl)
	if err != nil {
		return 0, err
	}
	hits, _, err := r.Cache.Increment(ctx, key)
	if err != nil {
		return 0, err
	}
	if !added && hits == 1 {
		err = r.Cache.Put(ctx, key, phpInt(1), ttl)
	}
	return hits, err
}

// AvailableIn is RateLimiter::availableIn: seconds until the window ends.
func (r RateLimiter) AvailableIn(ctx context.Context, key string) (int64, error) {
	at, err := r.get(ctx, key+timerSuffix)
	return max(0, at-r.Now().Unix()), err
}

// Clear is RateLimiter::clear: the counter and its timer go.
func (r RateLimiter) Clear(ctx context.Context, key string) error {
	if err := r.Cache.Forget(ctx, key); err != nil {
		return err
	}
	return r.Cache.Forget(ctx, key+timerSuffix)
}

// get is (int) $cache->get($key, 0).
func (r RateLimiter) get(ctx context.Context, key string) (int64, error) {
	raw, ok, err := r.Cache.Get(ctx, key)
	if err != nil || !ok {
		return 0, err
	}
	return phpIntOf(raw), nil
}

// phpInt is serialize() of an int.
func phpInt(n int64) []byte { return []byte("i:" + strconv.FormatInt(n, 10) + ";") }

// phpIntOf is PHP's (int) of a serialized scalar (0 for what is not one).
func phpIntOf(serialized []byte) int64 {
	v, err := phpserialize.Unserialize(serialized)
	if err != nil {
		return 0
	}
	switch v.Kind {
	case phpserialize.KindInt:
		return v.Int
	case phpserialize.KindFloat:
		return int64(v.Float)
	case phpserialize.KindBool:
		if v.Bool {
			return 1
		}
	case phpserialize.KindString:
		return leadingInt(string(v.Str))
	}
	return 0
}

// leadingInt is PHP's (int) of a string: its leading number, 0 if none.
func leadingInt(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return int64(f)
	}
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || end == 0 && (s[end] == '-' || s[end] == '+')) {
		end++
	}
	n, _ := strconv.ParseInt(s[:end], 10, 64)
	return n
}
