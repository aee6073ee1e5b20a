package handlers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
)

// TestJobMiddlewareRefusesWhatPHPCannotBe: an option of another
// middleware, a missing key or limiter, limits that allow nothing panic at
// registration (a programming error, as Handle's others), naming the
// class.
func TestJobMiddlewareRefusesWhatPHPCannotBe(t *testing.T) {
	limits := func(*payload.Command) ([]Limit, error) { return nil, nil }
	for _, c := range []struct {
		opt  Option
		want string
	}{
		{WithoutOverlapping(nil), "needs a key"},
		{RateLimited("", limits), "limiter's name"},
		{RateLimited("l", limits, Shared()), "ExpireAfter and Shared"},
		{RateLimited("l", limits, By(KeyString("x"))), "By, ByJob and Backoff"},
		{ThrottlesExceptions(0, time.Minute), "at least 1 attempt"},
		{ThrottlesExceptions(3, time.Minute, DontRelease()), "ReleaseAfter and DontRelease"},
		{ThrottlesExceptions(3, time.Minute, Connection("cache")), "...WithRedis"},
		{WithoutOverlapping(KeyString("k"), ReleaseAfter(-time.Second)), "negative"},
		{SkipIfBatchCancelled(), ""},
		{ThrottlesExceptionsWithRedis(3, time.Minute, Connection("cache"), ByJob(), WithPrefix("p:")), ""},
	} {
		got := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg = r.(string)
				}
			}()
			NewRegistry().HandleFunc(`App\Jobs\X`, func(context.Context, *Job) error { return nil }, c.opt)
			return ""
		}()
		if c.want == "" && got != "" || c.want != "" && (!strings.Contains(got, c.want) || !strings.Contains(got, `App\Jobs\X`)) {
			t.Errorf("got panic %q; want one naming %q and the class", got, c.want)
		}
	}
}

// TestRegistryListsDeclaredMiddleware: Registry.Middleware lists the
// classes with middleware, in their declared order.
func TestRegistryListsDeclaredMiddleware(t *testing.T) {
	r := NewRegistry()
	noop := func(context.Context, *Job) error { return nil }
	r.HandleFunc(`App\Jobs\A`, noop, SkipIfBatchCancelled(), WithoutOverlapping(KeyString("k")))
	r.HandleFunc(`App\Jobs\B`, noop)
	m := r.Middleware()
	if len(m) != 1 || len(m[`App\Jobs\A`]) != 2 || m[`App\Jobs\A`][0].Type != TypeSkipIfBatchCancelled || m[`App\Jobs\A`][1].Type != TypeWithoutOverlapping {
		t.Fatalf("Middleware() = %+v", m)
	}
}
