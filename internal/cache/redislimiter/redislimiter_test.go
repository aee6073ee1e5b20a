package redislimiter

import (
	"testing"
	"time"
)

// TestMicrotimeAsPHPPassesIt: the scripts compare the time with a
// window's start and end as strings, so the time must be the string PHP
// gives Redis for microtime(true): 14 significant digits (the values are
// PHP 8.2's (string) of these floats).
func TestMicrotimeAsPHPPassesIt(t *testing.T) {
	for micros, want := range map[int64]string{
		1796137900123456: "1796137900.1235",
		1796137900000000: "1796137900",
		1796137900500000: "1796137900.5",
		1796137900999990: "1796137901",
	} {
		if got := microtime(time.UnixMicro(micros)); got != want {
			t.Errorf("microtime(%d µs) = %s, want %s", micros, got, want)
		}
	}
}
