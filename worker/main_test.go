package worker

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when any goroutine outlives them: a
// worker that stopped must leave nothing running (claim loop, lease
// refresher, completer, handler goroutines, timers).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
