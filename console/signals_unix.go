//go:build unix

package console

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/laraworker/laraworker/worker"
)

// watchPauseSignals pauses claiming on SIGUSR2 and resumes on SIGCONT, as
// artisan's worker does, until ctx ends. The signals are caught from the
// moment it returns (before the worker claims anything), so an early
// SIGUSR2 pauses the worker rather than killing the process.
func watchPauseSignals(ctx context.Context, w *worker.Worker) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGUSR2, syscall.SIGCONT)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-ch:
				if s == syscall.SIGUSR2 {
					w.Pause()
				} else {
					w.Resume()
				}
			}
		}
	}()
}
