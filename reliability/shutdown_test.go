package reliability

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestShutdownWithTheDatabaseDown: the database goes away (a proxy
// refuses the Go worker's connections) while 4 jobs run; their outcomes
// cannot be written. After SIGTERM the worker exits within --grace +
// --write-grace, with exit status 75 and a final log line that counts the
// dropped outcomes. Once the database is back, `php artisan queue:work`
// runs those jobs again after retry_after: each job ran twice, and the
// second runs are exactly the dropped outcomes.
func TestShutdownWithTheDatabaseDown(t *testing.T) {
	needApp(t)
	const (
		queue      = "shutdown"
		jobs       = 4
		retryAfter = 3
		grace      = time.Second
		writeGrace = 2 * time.Second
	)
	uuids := pushCopies(t, app.q, noopTemplate(t, queue), queue, jobs)
	proxy := newNetProxy(t, "127.0.0.1:3306")
	goProc := goWorker(t, []string{"RELWORKER_SLEEP=1500ms", "LARAWORKER_DB_HOST=127.0.0.1", "LARAWORKER_DB_PORT=" + strconv.Itoa(proxy.port())},
		"--queue", queue, "--concurrency", strconv.Itoa(jobs), "--retry-after", strconv.Itoa(retryAfter), "--sleep", "0.1",
		"--memory", "0", "--tries", "5", "--grace", grace.String(), "--write-grace", writeGrace.String())
	waitFor(t, 20*time.Second, "Go to start every job", func() bool { return len(runsOf(t, noopClass)) == jobs })
	proxy.Cut()
	time.Sleep(2 * time.Second) // the handlers end; their deletes fail
	stopped := time.Now()
	goProc.signal(syscall.SIGTERM)
	err := goProc.wait(t, time.Minute)
	took := time.Since(stopped)

	code := 0
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		code = exit.ExitCode()
	}
	if code != 75 {
		t.Errorf("exit: %v, want status 75 (outcomes dropped)", err)
	}
	if bound := grace + writeGrace + time.Second; took > bound {
		t.Errorf("stopped %s after SIGTERM, more than --grace + --write-grace (+1s): %s", took, bound)
	}
	line := stoppedLine(t, goProc)
	if line["dropped"] != float64(jobs) || line["exit"] != float64(75) || line["level"] != "error" {
		t.Errorf("final log line %v, want dropped=%d exit=75 at level error", line, jobs)
	}
	if !strings.Contains(goProc.out.String(), "come back after retry_after") {
		t.Errorf("the log does not say what becomes of the dropped jobs:\n%s", tail(goProc.out.String()))
	}

	// The jobs are still reserved; after retry_after PHP (or Go) runs them.
	proxy.Restore()
	if left := count(t, app.q.DB(), "select count(*) from jobs where queue = ? and reserved_at is not null", queue); left != jobs {
		t.Fatalf("%d reserved rows after the dropped outcomes, want %d", left, jobs)
	}
	var rerun *proc
	if app.hasPHP {
		rerun = phpWorker(t, retryAfter, "--queue="+queue, "--sleep=1", "--tries=5")
	} else {
		rerun = goWorker(t, nil, "--queue", queue, "--retry-after", strconv.Itoa(retryAfter), "--sleep", "0.5", "--memory", "0", "--tries", "5")
	}
	waitFor(t, 30*time.Second, "the dropped jobs to run again", func() bool {
		return count(t, app.q.DB(), "select count(*) from jobs where queue = ?", queue) == 0
	})
	rerun.stop(t, 30*time.Second)
	perJob := map[string]int{}
	for _, r := range runsOf(t, noopClass) {
		perJob[r.UUID]++
	}
	for uuid := range uuids {
		if perJob[uuid] != 2 {
			t.Errorf("job %s ran %d times, want 2 (the dropped run and the re-run)", uuid, perJob[uuid])
		}
	}
	if f := failedRows(t, app.q.DB(), "failed_jobs"); len(f) != 0 {
		t.Errorf("%d failed jobs", len(f))
	}
	t.Logf("database down at shutdown: exit %d after %s (--grace %s + --write-grace %s), final line dropped=%v; the %d jobs ran again after retry_after",
		code, took.Round(100*time.Millisecond), grace, writeGrace, line["dropped"], jobs)
}
