package jobmiddleware

import (
	"testing"

	"github.com/laraworker/laraworker/internal/phphash"
)

// TestMiddlewareKeysPerVersion: the keys a registration's middleware get
// are the ones the app's Laravel computes (spec §5.2, §5.6).
func TestMiddlewareKeysPerVersion(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{overlapKey("8.83", "", `App\Jobs\Sync`, `App\Jobs\Sync`, "7", false), `laravel-queue-overlap:App\Jobs\Sync:7`},
		{overlapKey("9.32", "", `App\Jobs\Sync`, `App\Jobs\Sync`, "7", true), `laravel-queue-overlap:7`},
		{overlapKey("12.41", "", `App\Jobs\Sync`, "Sync podcast", "7", false), `laravel-queue-overlap:Sync podcast:7`},
		{overlapKey("12.54", "", `App\Jobs\Sync`, "Sync podcast", "7", false), "laravel-queue-overlap:" + phphash.XXH128("Sync podcast") + ":7"},
		{overlapKey("12.54", "p:", `App\Jobs\Sync`, `App\Jobs\Sync`, "7", false), `p:App\Jobs\Sync:7`},
		{throttlesKey("8.83", "", `App\Jobs\Sync`, `App\Jobs\Sync`, "u", "", false), "laravel_throttles_exceptions:" + phphash.MD5(`App\Jobs\Sync`)},
		{throttlesKey("12.0", "", `App\Jobs\Sync`, `App\Jobs\Sync`, "u", "", false), "laravel_throttles_exceptions:" + phphash.XXH128(`App\Jobs\Sync`)},
		{throttlesKey("12.41", "", `App\Jobs\Sync`, "Sync podcast", "u", "", false), "laravel_throttles_exceptions:" + phphash.XXH128("Sync podcast")},
		{throttlesKey("11.0", "", `App\Jobs\Sync`, `App\Jobs\Sync`, "uuid-1", "", true), "laravel_throttles_exceptions:uuid-1"},
		{throttlesKey("11.0", "", `App\Jobs\Sync`, `App\Jobs\Sync`, "uuid-1", "feed", true), "laravel_throttles_exceptions:feed"},
		{LimiterKey("podcasts", "7"), phphash.MD5("podcasts7")},
		{fallbackLimitKey("", 3, 60), "attempts:3:decay:60"},
		{fallbackLimitKey("k", 3, 60), "k:attempts:3:decay:60"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

// TestCleanRateLimiterKeyAsPHP: the by() key the bridge recorded from a
// real 8.83 app (bridgeproto/testdata) is cleaned as PHP cleaned it.
func TestCleanRateLimiterKeyAsPHP(t *testing.T) {
	for in, want := range map[string]string{
		"feed:Ünïcode & co":  "feed:Unicode a co",
		`<a href="x">`:       `la href=qxqg`,
		"½ & ² ∴":            "&frac12; a &sup2; &there4;",
		"plain-ascii_key:1":  "plain-ascii_key:1",
		"日本":                 "日本",
		"it's":               "it&#039;s",
		"Œuvre € — ‘quoted’": "Ouvre e m lquotedr",
	} {
		got, err := cleanRateLimiterKey("10.0", in)
		if err != nil || got != want {
			t.Errorf("clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := cleanRateLimiterKey("9.52", "it's"); err == nil {
		t.Error("a quote on Laravel 9 (PHP 7.3-8.x) must be refused: Go cannot know the PHP version")
	}
}
