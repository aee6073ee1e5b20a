//go:build windows

package console

import (
	"context"

	"github.com/laraworker/laraworker/worker"
)

// watchPauseSignals does nothing on Windows: it has no SIGUSR2/SIGCONT
// (the dashboard's pauses work everywhere).
func watchPauseSignals(context.Context, *worker.Worker) {}
