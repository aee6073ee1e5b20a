package jobmiddleware

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// RateLimiter is Illuminate\Cache\RateLimiter on one cache store, for the
// keys the RateLimited and ThrottlesExceptions middleware use: a counter
// at key and, at key + ":timer", the Unix time its window ends. Keys are
// whole (the store's prefix included) and already cleaned
// (cleanRateLimiterKey), as the bridge records them.
type RateLimiter struct {
	Cache jobqueue.Cache
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

// limiterTurns serialises, within this process, the check and the hit of
// one limiter key. Laravel's RateLimited reads the count, then hits it:
// jobs checked at the same moment all pass at max-1. A PHP worker runs one
// job at a time, so PHP workers rarely meet there; a Go worker checks
// several jobs at once and, without this, passed the limit by up to its
// concurrency at the start of every window (issue 22's e2e test). A PHP
// worker or another Go process can still slip in between, as between two
// PHP workers.
var limiterTurns = keyedMutex{held: map[string]*keyedTurn{}}

// keyedMutex is one mutex per key, dropped when nobody holds or waits for
// it: limiter keys are often per model and would otherwise pile up.
type keyedMutex struct {
	mu   sync.Mutex
	held map[string]*keyedTurn
}

type keyedTurn struct {
	sync.Mutex
	users int // holder and waiters
}

// lock takes key's mutex and returns its unlock.
func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	turn := k.held[key]
	if turn == nil {
		turn = &keyedTurn{}
		k.held[key] = turn
	}
	turn.users++
	k.mu.Unlock()
	turn.Lock()
	return func() {
		turn.Unlock()
		k.mu.Lock()
		if turn.users--; turn.users == 0 {
			delete(k.held, key)
		}
		k.mu.Unlock()
	}
}

// CheckAndHit is TooManyAttempts and, when the limit is not used up, Hit,
// as one step for the goroutines of this process (limiterTurns). store
// names the cache store, so equal keys in two stores do not wait for each
// other.
func (r RateLimiter) CheckAndHit(ctx context.Context, store, key string, maxAttempts, decaySeconds int64) (tooMany bool, err error) {
	defer limiterTurns.lock(store + "\x00" + key)()
	if tooMany, err = r.TooManyAttempts(ctx, key, maxAttempts); err != nil || tooMany {
		return tooMany, err
	}
	_, err = r.Hit(ctx, key, decaySeconds)
	return false, err
}
