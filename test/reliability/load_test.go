package reliability

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q", name, v)
	}
	return n
}

// TestLoad: N `laraworker work` processes (concurrency 8 each) and 2
// `php artisan queue:work` drain M short NoopJobs from one queue. Every
// job runs exactly once on attempt 1, none fails (so no deadlock ever
// surfaces as a failure), and the throughput is reported. CI size: 4 + 2
// on 10,000; scripts/soak.sh runs 8 + 2 on 50,000.
func TestLoad(t *testing.T) {
	needApp(t)
	procs := envInt(t, "LARAWORKER_REL_LOAD_PROCS", 4)
	jobs := envInt(t, "LARAWORKER_REL_LOAD_JOBS", 10000)
	phpProcs := envInt(t, "LARAWORKER_REL_LOAD_PHP", 2)
	if !app.hasPHP {
		t.Log("php is not installed: Go workers only")
		phpProcs = 0
	}
	const queue = "load"
	uuids := pushCopies(t, app.q, noopTemplate(t, queue), queue, jobs)

	started := time.Now()
	var workers []*proc
	for range phpProcs {
		workers = append(workers, phpWorker(t, 90, "--queue="+queue, "--stop-when-empty", "--sleep=1"))
	}
	for range procs {
		workers = append(workers, goWorker(t, nil, "--queue", queue, "--concurrency", "8", "--sleep", "0.2", "--stop-when-empty", "--memory", "0"))
	}
	for _, w := range workers {
		if err := w.wait(t, 10*time.Minute); err != nil {
			t.Errorf("%s: %v\n%s", w.name, err, tail(w.out.String()))
		}
	}
	wall := time.Since(started)

	if left := count(t, app.q.DB(), "select count(*) from jobs"); left != 0 {
		t.Errorf("%d jobs left", left)
	}
	if f := failedRows(t, app.q.DB(), "failed_jobs"); len(f) != 0 {
		t.Errorf("%d jobs failed; first: %.400s", len(f), f[0].Exception)
	}
	all := runsOf(t, noopClass) // not a late run of another test's job
	seen := map[string]int{}
	byKind := map[string]int{}
	for _, r := range all {
		seen[r.UUID]++
		if !uuids[r.UUID] {
			t.Errorf("a run of a job nobody pushed: %+v", r)
		}
		if r.Attempt != 1 {
			t.Errorf("job %s ran on attempt %d (%s)", r.UUID, r.Attempt, r.Worker)
		}
		if strings.HasPrefix(r.Worker, "go:") {
			byKind["go"]++
		} else {
			byKind[r.Worker]++
		}
	}
	twice := 0
	for _, n := range seen {
		if n > 1 {
			twice++
		}
	}
	if len(all) != jobs || len(seen) != jobs || twice != 0 {
		t.Errorf("%d runs of %d distinct jobs (%d more than once), want exactly %d once each", len(all), len(seen), twice, jobs)
	}
	deadlocks := 0
	for _, w := range workers {
		deadlocks += strings.Count(w.out.String(), "Deadlock")
	}
	t.Logf("load: %d Go processes x 8 + %d PHP workers, %d jobs in %s = %.0f jobs/s (go %d, php %d); exactly once: %v; deadlock lines in logs: %d",
		procs, phpProcs, jobs, wall.Round(time.Millisecond), float64(jobs)/wall.Seconds(), byKind["go"], byKind["php"],
		len(all) == jobs && twice == 0, deadlocks)
}

// TestLongJobLease: a SleepJob running 3x retry_after (retry_after 3 s,
// job 9 s). Under laraworker, whose lease refresh keeps the reservation
// fresh, it runs once although a PHP worker polls the same queue the whole
// time. Under PHP alone (no lease: Laravel's issue #52493) a second PHP
// worker takes it again once retry_after has passed: it runs twice. The
// difference is the test.
func TestLongJobLease(t *testing.T) {
	needApp(t)
	const (
		queue      = "long"
		retryAfter = 3
		seconds    = 3 * retryAfter
	)
	// SleepJob's class sets timeout 2 and failOnTimeout; the job here
	// carries timeout 60 so only retry_after matters.
	raw, err := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\SleepJob`,
		phpserialize.Public("seconds", phpserialize.Int(seconds)), phpserialize.Public("timeout", phpserialize.Int(60)),
		phpserialize.Public("tries", phpserialize.Int(5)), phpserialize.Public("queue", phpserialize.String(queue))), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	starts := func(uuid string) (goStarts, phpStarts, ends int) {
		for _, r := range runs(t) {
			if r.UUID != uuid {
				continue
			}
			switch {
			case strings.Contains(r.Result, `"end"`):
				ends++
			case strings.HasPrefix(r.Worker, "go:"):
				goStarts++
			default:
				phpStarts++
			}
		}
		return
	}

	t.Run("laraworker with lease", func(t *testing.T) {
		uuid := onlyUUID(t, pushCopies(t, app.q, raw, queue, 1))
		w := goWorker(t, nil, "--queue", queue, "--retry-after", strconv.Itoa(retryAfter), "--sleep", "0.1", "--memory", "0")
		waitFor(t, 10*time.Second, "laraworker to start the job", func() bool { g, _, _ := starts(uuid); return g == 1 })
		var poller *proc
		if app.hasPHP {
			poller = phpWorker(t, retryAfter, "--queue="+queue, "--sleep=1", "--tries=5")
		} else {
			poller = goWorker(t, nil, "--queue", queue, "--retry-after", strconv.Itoa(retryAfter), "--sleep", "0.5", "--memory", "0")
		}
		waitFor(t, time.Duration(seconds+10)*time.Second, "the job to end", func() bool { _, _, e := starts(uuid); return e >= 1 })
		time.Sleep(2 * time.Second) // a second taker would have started by now
		w.stop(t, 30*time.Second)
		poller.stop(t, 30*time.Second)
		g, p, e := starts(uuid)
		t.Logf("laraworker, lease on: job of %d s with retry_after %d s: %d run(s) by Go, %d by the polling worker, %d end(s)", seconds, retryAfter, g, p, e)
		if g+p != 1 || e != 1 {
			t.Errorf("the long job ran %d times (go %d, other %d), want once", g+p, g, p)
		}
		if left := count(t, app.q.DB(), "select count(*) from jobs"); left != 0 {
			t.Errorf("%d jobs left", left)
		}
	})

	t.Run("PHP without lease", func(t *testing.T) {
		needPHP(t)
		uuid := onlyUUID(t, pushCopies(t, app.q, raw, queue, 1))
		first := phpWorker(t, retryAfter, "--queue="+queue, "--sleep=1", "--tries=5")
		waitFor(t, 15*time.Second, "PHP to start the job", func() bool { _, p, _ := starts(uuid); return p == 1 })
		second := phpWorker(t, retryAfter, "--queue="+queue, "--sleep=1", "--tries=5")
		waitFor(t, time.Duration(2*seconds+10)*time.Second, "the runs to end", func() bool {
			_, p, e := starts(uuid)
			return e >= p && p >= 1 && e >= 1
		})
		time.Sleep(2 * time.Second)
		first.stop(t, 30*time.Second)
		second.stop(t, 30*time.Second)
		_, p, e := starts(uuid)
		t.Logf("PHP only, no lease: job of %d s with retry_after %d s: %d runs, %d ends", seconds, retryAfter, p, e)
		if p < 2 {
			t.Errorf("PHP ran the long job %d time(s): expected the second worker to take it again after retry_after", p)
		}
	})
}

func onlyUUID(t *testing.T, m map[string]bool) string {
	t.Helper()
	for u := range m {
		return u
	}
	t.Fatal("no uuid")
	return ""
}
