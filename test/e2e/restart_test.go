package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestQueueRestartStopsGoWorkers: `php artisan queue:restart` writes a new
// timestamp into the app's cache (the database store here); a running
// laraworker sees it and exits 0, as PHP workers do, so a process manager
// starts it again with new code.
func TestQueueRestartStopsGoWorkers(t *testing.T) { onEachDB(t, testQueueRestartStopsGoWorkers) }

func testQueueRestartStopsGoWorkers(t *testing.T, s *suite) {
	s.artisan(t, "queue:restart") // a stamp exists before the worker starts, as in a deployed app
	goWorker := s.start(t, s.lwCmd("work", "--sleep", "0.1", s.route(`App\Jobs\NoopJob`)))
	time.Sleep(time.Second + 100*time.Millisecond) // the stamp is Unix seconds: the next one must differ
	select {
	case err := <-goWorker.done:
		goWorker.done <- err
		t.Fatalf("the worker stopped before queue:restart: %v\n%s", err, tail(goWorker.stderr.String()))
	default:
	}
	s.artisan(t, "queue:restart")
	goWorker.wait(t, 15*time.Second)
	if log := goWorker.stderr.String(); !strings.Contains(log, `"reason":"restart_signal"`) {
		t.Fatalf("the worker did not say it stopped for queue:restart:\n%s", tail(log))
	}
}
