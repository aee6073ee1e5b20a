package uniquelock

import (
	osexec "os/exec"
	"testing"
)

// phpXXH128 is PHP's hash('xxh128', s), asked of PHP itself.
func phpXXH128(t *testing.T, s string) string {
	t.Helper()
	out, err := osexec.Command("php", "-r", `echo hash("xxh128", $argv[1]);`, s).Output()
	if err != nil {
		t.Skipf("php is needed to check xxh128: %v", err)
	}
	return string(out)
}

// TestUniqueLockKeyPerVersion: UniqueLock::getKey's three forms; the
// xxh128 is PHP's own (php -r 'echo hash("xxh128", "Send welcome mail");').
func TestUniqueLockKeyPerVersion(t *testing.T) {
	cases := []struct{ version, display, want string }{
		{"8.83", `App\Jobs\UniqueJob`, `laravel_unique_job:App\Jobs\UniqueJob42`},
		{"10.50", `App\Jobs\UniqueJob`, `laravel_unique_job:App\Jobs\UniqueJob42`},
		{"11.0", `App\Jobs\UniqueJob`, `laravel_unique_job:App\Jobs\UniqueJob:42`},
		{"12.53", "Send welcome mail", `laravel_unique_job:App\Jobs\UniqueJob:42`},
		{"12.54", `App\Jobs\UniqueJob`, `laravel_unique_job:App\Jobs\UniqueJob:42`},
		{"13.26", "Send welcome mail", "laravel_unique_job:" + phpXXH128(t, "Send welcome mail") + ":42"},
	}
	for _, c := range cases {
		if got := Key(c.version, `App\Jobs\UniqueJob`, c.display, "42"); got != c.want {
			t.Errorf("%s: key %q, want %q", c.version, got, c.want)
		}
	}
}
