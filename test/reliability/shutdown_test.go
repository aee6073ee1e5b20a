package reliability

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/faultproxy"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
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
	proxy := faultproxy.New(t, "127.0.0.1:3306")
	goProc := goWorker(t, []string{"RELWORKER_SLEEP=1500ms", "LARAWORKER_DB_HOST=127.0.0.1", "LARAWORKER_DB_PORT=" + strconv.Itoa(proxy.Port())},
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

// TestDeployFailsNothing is a rolling deploy under --tries=1: SIGTERM
// reaches a Go worker while 4 jobs longer than --grace run (their timeout
// is 10 minutes), twice in a row (two deploys during the jobs); then a
// restarted Go worker, and `php artisan queue:work` beside it when PHP is
// installed, run them. No job lands in failed_jobs: each interruption
// gives the rows back as before the claim (attempts 0, not reserved), the
// worker logs one line per job and counts them in its last line, and each
// job runs to its end exactly once more, on its first attempt.
func TestDeployFailsNothing(t *testing.T) {
	needApp(t)
	const (
		queue = "deploy"
		jobs  = 4
		grace = time.Second
	)
	raw, err := payload.BuildObjectPayload(phpserialize.Object(sleepClass,
		phpserialize.Public("seconds", phpserialize.Int(1)), phpserialize.Public("timeout", phpserialize.Int(600)),
		phpserialize.Public("queue", phpserialize.String(queue))), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uuids := pushCopies(t, app.q, raw, queue, jobs)
	args := []string{"--queue", queue, "--concurrency", strconv.Itoa(jobs), "--tries", "1", "--grace", grace.String(),
		"--sleep", "0.1", "--memory", "0"}
	const deploys = 2
	for d := 1; d <= deploys; d++ {
		// The Go handler sleeps 10 minutes (honouring its context): only
		// the shutdown ends it.
		goProc := goWorker(t, []string{"RELWORKER_SLEEP_SECONDS=600"}, args...)
		waitFor(t, 30*time.Second, "Go to start every job", func() bool {
			started := 0
			for _, c := range tallies(t, sleepClass) {
				if c.goStarts == d {
					started++
				}
			}
			return started == jobs
		})
		signalled := time.Now()
		goProc.signal(syscall.SIGTERM)
		if err := goProc.wait(t, time.Minute); err != nil {
			t.Fatalf("deploy %d: the worker exited with %v:\n%s", d, err, tail(goProc.out.String()))
		}
		took := time.Since(signalled)
		if line := stoppedLine(t, goProc); line["interrupted"] != float64(jobs) || line["failed"] != float64(0) {
			t.Errorf("deploy %d: final line %v, want interrupted=%d failed=0", d, line, jobs)
		}
		restored := map[string]bool{}
		for _, rec := range logRecords(goProc.out.String(), "cut short by shutdown; its attempt is restored") {
			uuid, _ := rec["uuid"].(string)
			restored[uuid] = rec["class"] == sleepClass && rec["interruption"] == float64(d)
		}
		for uuid := range uuids {
			if !restored[uuid] {
				t.Errorf("deploy %d: no \"attempt is restored\" line (interruption %d) for job %s:\n%s", d, d, uuid, tail(goProc.out.String()))
			}
		}
		if n := count(t, app.q.DB(), "select count(*) from jobs where queue = ? and attempts = 0 and reserved_at is null", queue); n != jobs {
			t.Fatalf("deploy %d: %d rows back as before the claim, want %d", d, n, jobs)
		}
		if f := failedRows(t, app.q.DB(), "failed_jobs"); len(f) != 0 {
			t.Fatalf("deploy %d: %d failed jobs: %+v", d, len(f), f)
		}
		t.Logf("deploy %d: SIGTERM with %d jobs running, --grace %s: exit 0 after %s, the %d rows back with attempts 0",
			d, jobs, grace, took.Round(100*time.Millisecond), jobs)
	}

	// PHP (which reads the attempts as Laravel does) takes one job first,
	// then the restarted Go worker the rest: all on their first attempt.
	var php *proc
	if app.hasPHP {
		php = phpWorker(t, 90, "--queue="+queue, "--sleep=1", "--tries=1")
		waitFor(t, 30*time.Second, "PHP to start a job", func() bool {
			for _, c := range tallies(t, sleepClass) {
				if c.phpStarts > 0 {
					return true
				}
			}
			return false
		})
	}
	restarted := goWorker(t, nil, args...)
	waitFor(t, time.Minute, "the jobs to run after the deploys", func() bool {
		return count(t, app.q.DB(), "select count(*) from jobs where queue = ?", queue) == 0
	})
	restarted.stop(t, 30*time.Second)
	if php != nil {
		php.stop(t, 30*time.Second)
	}
	if f := failedRows(t, app.q.DB(), "failed_jobs"); len(f) != 0 {
		t.Fatalf("%d failed jobs after the deploys: %+v", len(f), f)
	}
	byPHP := 0
	for uuid := range uuids {
		c := tallies(t, sleepClass)[uuid]
		if c == nil || c.goStarts+c.phpStarts != deploys+1 || c.goEnds+c.phpEnds != 1 {
			t.Errorf("job %s: runs %+v, want %d cut short and one more run to its end", uuid, c, deploys)
		}
		if c != nil && c.phpEnds == 1 {
			byPHP++
		}
	}
	for _, r := range runsOf(t, sleepClass) {
		if strings.Contains(r.Result, `"end"`) && r.Attempt != 1 {
			t.Errorf("job %s ended on attempt %d, want 1 (the interruptions restored it)", r.UUID, r.Attempt)
		}
	}
	t.Logf("%d jobs longer than --grace, --tries=1, %d deploys each: 0 failed, each ran once more to its end on attempt 1 (%d by PHP)", jobs, deploys, byPHP)
}
