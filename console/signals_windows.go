//go:build windows

package console

import (
	"context"

	"github.com/laraworker/laraworker/worker"
)

// pauseOnSignals does nothing on Windows: it has no SIGUSR2/SIGCONT (the
// dashboard's pauses work everywhere).
func pauseOnSignals(context.Context, *worker.Worker) {}
