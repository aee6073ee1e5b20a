//go:build unix

package console

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/laraworker/laraworker/worker"
)

// pauseOnSignals pauses claiming on SIGUSR2 and resumes on SIGCONT, as
// artisan's worker does.
func pauseOnSignals(ctx context.Context, w *worker.Worker) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGUSR2, syscall.SIGCONT)
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
}
