package e2e

import (
	"syscall"
	"testing"
	"time"
)

// TestUnroutedLeftForPHP (g): on a queue shared with PHP, a running Go
// worker runs only the classes it has handlers for; the other rows are
// never reserved, not even for a moment, and keep attempts 0, so PHP later
// runs them on attempt 1.
func TestUnroutedLeftForPHP(t *testing.T) { onEachDB(t, testUnroutedLeftForPHP) }

func testUnroutedLeftForPHP(t *testing.T, s *suite) {
	for _, kind := range []string{"scalars", "noop", "throws", "noop", "enums-dates", "noop"} {
		s.artisan(t, "app:dispatch", kind)
	}
	var forPHP []jobRow
	for _, j := range s.jobs(t) {
		if j.Class != `App\Jobs\NoopJob` {
			forPHP = append(forPHP, j)
		}
	}

	goWorker := s.start(t, s.lwCmd("work", "--sleep", "0.1", "--concurrency", "4", s.route(`App\Jobs\NoopJob`)))
	deadline := time.Now().Add(30 * time.Second)
	sawNoop := true
	for polls := 0; polls < 20 || sawNoop; polls++ {
		if time.Now().After(deadline) {
			t.Fatalf("Go did not run the NoopJobs within 30 s: %+v", s.jobs(t))
		}
		if polls == 10 {
			s.artisan(t, "app:dispatch", "noop", "--count=3") // pushed while Go is polling
		}
		rows := s.jobs(t)
		sawNoop = false
		var others []jobRow
		for _, j := range rows {
			if j.Class == `App\Jobs\NoopJob` {
				sawNoop = true
			} else {
				others = append(others, j)
			}
		}
		assertUntouched(t, forPHP, others)
		if t.Failed() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := goWorker.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	goWorker.wait(t, 30*time.Second)
	assertUntouched(t, forPHP, s.jobs(t))

	s.phpWork(t, "--stop-when-empty")
	byUUID := runsByUUID(s.runs(t))
	goRuns := 0
	for uuid, rs := range byUUID {
		if rs[0].Worker == "go" {
			goRuns++
		}
		if len(rs) != 1 || rs[0].Attempt != 1 {
			t.Errorf("job %s runs %+v, want one on attempt 1", uuid, rs)
		}
	}
	for _, j := range forPHP {
		if rs := byUUID[j.UUID]; len(rs) != 1 || rs[0].Worker != "php" {
			t.Errorf("%s ran %+v, want once in PHP", j.Class, rs)
		}
	}
	if goRuns != 6 {
		t.Errorf("Go ran %d NoopJobs, want 6", goRuns)
	}
}
