package reliability

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRedisConnectionFaults: while a `laraworker work --concurrency 8` and
// a `php artisan queue:work redis` drain 4,000 NoopJobs from one queue,
// Redis breaks under them five times, each once a fraction of the jobs
// has run: CLIENT KILL of every connection of the Go process (three
// times: Go's pops, deletes and lease extensions see their connection
// closed mid-command) and a restart of the redis-server (twice: SIGKILL
// and start again on the same port, with appendonly and appendfsync
// always, so what Redis acknowledged survives, as on a server set up to
// keep its data). A PHP worker that exits on a lost connection is started
// again, as a supervisor would.
//
// No job may be lost or failed, no reservation run twice, and the Go
// worker must keep running through all of it. Jobs whose reservation was
// in flight when a connection broke (a pop whose reply was lost, a running
// job whose delete could not be sent) come back after retry_after and run
// again: counted, and bounded by what a worker holds.
func TestRedisConnectionFaults(t *testing.T) {
	const (
		queue       = "faults"
		jobs        = 4000
		concurrency = 8
		retryAfter  = 5
	)
	r := needRedisApp(t, retryAfter, "--appendonly", "yes", "--appendfsync", "always")
	ctx := context.Background()
	if v, err := r.rc.ConfigGet(ctx, "appendonly").Result(); err != nil || v["appendonly"] != "yes" {
		t.Fatalf("the test's redis-server runs with appendonly %v (%v), want yes", v, err)
	}
	uuids := r.pushCopies(t, r.noopTemplate(t, queue), queue, jobs)
	goProc := r.goWorker(t, []string{"RELWORKER_SLEEP=5ms"}, "--queue", queue, "--concurrency", strconv.Itoa(concurrency),
		"--sleep", "0.2", "--tries", "5", "--memory", "0")
	phpArgs := []string{"--queue=" + queue, "--sleep=1", "--tries=5"}
	php := r.phpWorker(t, phpArgs...)
	phpStarts := 1

	ran := func() int {
		return count(t, app.q.DB(), "select count(distinct uuid) from job_runs where class = ?", noopClass)
	}
	faults := []struct {
		at   int // jobs run before the fault
		kind string
	}{
		{jobs / 10, "client kill"}, {jobs / 4, "client kill"}, {2 * jobs / 5, "restart"},
		{3 * jobs / 5, "client kill"}, {3 * jobs / 4, "restart"},
	}
	var log []string
	started := time.Now()
	for _, f := range faults {
		waitFor(t, 2*time.Minute, fmt.Sprintf("%d jobs to run before the %s", f.at, f.kind), func() bool {
			if php.exited() {
				php = r.phpWorker(t, phpArgs...)
				phpStarts++
			}
			return ran() >= f.at
		})
		if goProc.exited() {
			t.Fatalf("the Go worker exited: %v\n%s", goProc.err, tail(goProc.out.String()))
		}
		switch f.kind {
		case "client kill":
			n := r.killClients(t, goProc.pid())
			if n == 0 {
				t.Fatalf("no connection of the Go worker (pid %d) to kill", goProc.pid())
			}
			log = append(log, fmt.Sprintf("%s of %d connections at %d jobs", f.kind, n, f.at))
		case "restart":
			down := time.Now()
			r.srv.Restart(t)
			log = append(log, fmt.Sprintf("restart at %d jobs (down %s, %d jobs in Redis after it)", f.at, time.Since(down).Round(time.Millisecond), r.left(t, queue)))
		}
	}
	waitFor(t, 3*time.Minute, "the queue to empty", func() bool {
		if php.exited() {
			php = r.phpWorker(t, phpArgs...)
			phpStarts++
		}
		return r.left(t, queue) == 0
	})
	wall := time.Since(started)
	if goProc.exited() {
		t.Fatalf("the Go worker exited: %v\n%s", goProc.err, tail(goProc.out.String()))
	}
	goProc.stop(t, 30*time.Second)
	php.stop(t, 30*time.Second)

	if f := failedRows(t, app.q.DB(), "failed_jobs"); len(f) != 0 {
		t.Errorf("%d jobs failed; first: %.400s", len(f), f[0].Exception)
	}
	all := runsOf(t, noopClass)
	byUUID := map[string][]run{}
	byWorker := map[string]int{}
	for _, r := range all {
		if !uuids[r.UUID] {
			t.Errorf("a run of a job nobody pushed: %+v", r)
		}
		byUUID[r.UUID] = append(byUUID[r.UUID], r)
		byWorker[strings.SplitN(r.Worker, ":", 2)[0]]++
	}
	if len(byUUID) != jobs {
		t.Errorf("%d distinct jobs ran, want %d: %d lost", len(byUUID), jobs, jobs-len(byUUID))
	}
	rerun := map[string]int{} // by the worker of the earlier run
	attemptAbove1 := 0
	for uuid, rs := range byUUID {
		sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
		seen := map[int64]bool{}
		for _, r := range rs {
			if seen[r.Attempt] {
				t.Errorf("job %s ran twice on attempt %d: one reservation was run twice: %+v", uuid, r.Attempt, rs)
			}
			seen[r.Attempt] = true
			if r.Attempt > 1 {
				attemptAbove1++
			}
		}
		for _, r := range rs[:len(rs)-1] {
			rerun[strings.SplitN(r.Worker, ":", 2)[0]]++
		}
	}
	// What a fault can leave behind: the jobs a worker holds (Go: its
	// running handlers, the finished jobs whose delete was in flight and a
	// claim's worth; PHP: one), as in the crash test.
	if bound := len(faults) * (3*concurrency + 1); rerun["go"]+rerun["php"] > bound {
		t.Errorf("%d jobs ran again after the %d faults, more than %d (3 x concurrency + 1 per fault)", rerun["go"]+rerun["php"], len(faults), bound)
	}
	out := goProc.out.String()
	t.Logf("redis faults: %d jobs drained in %s through %s; Go saw %d failed writes and %d failed claims, and retried them; "+
		"runs: %d (go %d, php %d), %d on attempt > 1; ran again: %d after a Go run, %d after a PHP run; "+
		"Go dropped %d outcomes as reservation lost; php queue:work started %d times; lost %d, failed %d",
		jobs, wall.Round(time.Millisecond), strings.Join(log, ", "), len(logRecords(out, "database write failed")), len(logRecords(out, "claiming jobs failed")),
		len(all), byWorker["go"], byWorker["php"], attemptAbove1, rerun["go"], rerun["php"],
		len(lostUUIDs(out)), phpStarts, jobs-len(byUUID), len(failedRows(t, app.q.DB(), "failed_jobs")))
}
