package cmdline

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30": 30 * time.Second, "0": 0, "0.5": 500 * time.Millisecond, "30s": 30 * time.Second,
		"1m30s": 90 * time.Second, "500ms": 500 * time.Millisecond,
	} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "-1", "-5s", "30 s", "1e300"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
