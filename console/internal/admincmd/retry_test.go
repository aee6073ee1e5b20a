package admincmd

import (
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

func TestRefreshedRetryUntilRules(t *testing.T) {
	now := time.Unix(2_000_000_000, 0)
	build := func(shape payload.Shape, props []phpserialize.Entry, created time.Time, until int64) []byte {
		raw, err := payload.BuildObjectPayload(payload.NewCommand(`App\Jobs\W`, props, payload.Dispatch{Shape: shape}),
			payload.BuildOptions{Shape: shape, Now: created})
		if err != nil {
			t.Fatal(err)
		}
		if raw, err = payload.ReencodeLikeRetry(raw, &until); err != nil {
			t.Fatal(err)
		}
		return raw
	}
	hourAgo := now.Add(-time.Hour)
	cases := []struct {
		name string
		raw  []byte
		want *int64
	}{
		{"expired, createdAt, from a method", build(payload.Shape12, nil, hourAgo, hourAgo.Unix()+600), ptr(now.Unix() + 600)},
		{"not expired", build(payload.Shape12, nil, hourAgo, now.Unix()+5), nil},
		{"no createdAt (8.x)", build(payload.Shape8, nil, hourAgo, hourAgo.Unix()+600), nil},
		{"public property", build(payload.Shape12, []phpserialize.Entry{phpserialize.Public("retryUntil", phpserialize.Int(hourAgo.Unix()+600))}, hourAgo, hourAgo.Unix()+600), nil},
	}
	for _, c := range cases {
		got := refreshedRetryUntil(c.raw, nil, now)
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s: got %v, want %v", c.name, deref(got), deref(c.want))
		}
	}
}

func ptr(n int64) *int64 { return &n }

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
