package console

import (
	"testing"

	"github.com/laraworker/laraworker/console/internal/classcmd"
	"github.com/laraworker/laraworker/console/internal/cmdline"
)

// TestExitStatusesAreTheCommands': the public statuses are the ones the
// commands return (they are spelled out in api.go for the docs).
func TestExitStatusesAreTheCommands(t *testing.T) {
	if ExitUsage != cmdline.ExitUsage || ExitLost != classcmd.ExitLost {
		t.Errorf("ExitUsage %d, ExitLost %d; the commands return %d and %d", ExitUsage, ExitLost, cmdline.ExitUsage, classcmd.ExitLost)
	}
}
