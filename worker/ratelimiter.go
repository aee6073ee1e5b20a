package worker

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/phpserialize"
)

// rateLimiter is Illuminate\Cache\RateLimiter on one cache store, for the
// keys the RateLimited and ThrottlesExceptions middleware use: a counter
// at key and, at key + ":timer", the Unix time its window ends. Keys are
// whole (the store's prefix included) and already cleaned
// (cleanRateLimiterKey), as the bridge records them.
type rateLimiter struct {
	cache jobqueue.CacheStore
	now   func() time.Time
}

const timerSuffix = ":timer"

// tooManyAttempts is RateLimiter::tooManyAttempts: the count has reached
// maxAttempts and the window is still open. A count at the maximum whose
// window is gone is reset.
func (r rateLimiter) tooManyAttempts(ctx context.Context, key string, maxAttempts int64) (bool, error) {
	attempts, err := r.get(ctx, key)
	if err != nil || attempts < maxAttempts {
		return false, err
	}
	_, open, err := r.cache.Get(ctx, key+timerSuffix)
	if err != nil || open {
		return open, err
	}
	return false, r.cache.Forget(ctx, key)
}

// hit is RateLimiter::hit: the window's timer and the counter are added
// when missing, the counter is incremented, and a counter that expired
// between the add and the increment is put back at 1.
func (r rateLimiter) hit(ctx context.Context, key string, decaySeconds int64) (int64, error) {
	ttl := time.Duration(decaySeconds) * time.Second
	availableAt := r.now().Unix() + decaySeconds
	if _, err := r.cache.Add(ctx, key+timerSuffix, phpInt(availableAt), ttl); err != nil {
		return 0, err
	}
	added, err := r.cache.Add(ctx, key, phpInt(0), ttl)
	if err != nil {
		return 0, err
	}
	hits, _, err := r.cache.Increment(ctx, key)
	if err != nil {
		return 0, err
	}
	if !added && hits == 1 {
		err = r.cache.Put(ctx, key, phpInt(1), ttl)
	}
	return hits, err
}

// availableIn is RateLimiter::availableIn: seconds until the window ends.
func (r rateLimiter) availableIn(ctx context.Context, key string) (int64, error) {
	at, err := r.get(ctx, key+timerSuffix)
	return max(0, at-r.now().Unix()), err
}

// clear is RateLimiter::clear: the counter and its timer go.
func (r rateLimiter) clear(ctx context.Context, key string) error {
	if err := r.cache.Forget(ctx, key); err != nil {
		return err
	}
	return r.cache.Forget(ctx, key+timerSuffix)
}

// get is (int) $cache->get($key, 0).
func (r rateLimiter) get(ctx context.Context, key string) (int64, error) {
	raw, ok, err := r.cache.Get(ctx, key)
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
