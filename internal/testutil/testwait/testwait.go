// Package testwait is how tests wait for an event: until a condition
// holds, or a value arrives on a channel, and never longer than a
// timeout, so a broken feature fails its test with a message instead of
// hanging it until `go test -timeout`.
package testwait

import (
	"testing"
	"time"
)

// Until polls cond until it holds, failing t (Fatalf, so call it from the
// test's goroutine) with what when it still does not hold after timeout.
// Polls start every millisecond and back off to every 20 ms.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Poll polls cond as Until does and reports whether it held within
// timeout (for a test that has something to say when it did not).
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		t := time.NewTimer(pause)
		<-t.C
		pause = min(2*pause, 20*time.Millisecond)
	}
	return true
}

// Recv is `<-ch` with a timeout: it returns what ch gives (the zero value
// once ch is closed), failing t (Fatalf) with what when nothing comes
// within timeout.
func Recv[T any](t testing.TB, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
	var zero T
	return zero
}
