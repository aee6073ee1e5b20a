package reliability

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRedisCrashesLoseNothing is TestCrashesLoseNothing on Laravel's Redis
// queue: a `laraworker work` process is SIGKILLed 20 times at random
// moments while it and `php artisan queue:work redis` drain 5,000 NoopJobs
// from one queue, and restarted each time; retry_after is 5 s on both
// sides, so the reservations a killed worker leaves come back quickly.
//
// Right after each kill (the process is gone, its reservations are
// frozen) the test reads the queue's reserved set: the members that were
// not there at an earlier kill and are not PHP's running job are what the
// killed worker had in flight. Every
// job must run, none may fail, no reservation may run twice (uuid and
// attempt unique), and a job may run again only when its earlier run was
// by a killed process and the job was in flight at that kill: the
// exactly-once violations are counted and compared with what was in
// flight.
func TestRedisCrashesLoseNothing(t *testing.T) {
	const (
		queue       = "crash"
		jobs        = 5000
		kills       = 20
		concurrency = 8
		retryAfter  = 5
		topUpBelow  = 1000 // ready jobs under which a kill pushes more
		topUp       = 2000
	)
	r := needRedisApp(t, retryAfter)
	// One template, taken while the queue is empty: noopTemplate pops the
	// list's head, which during the drain would be another job.
	template := r.noopTemplate(t, queue)
	uuids := r.pushCopies(t, template, queue, jobs)
	pushed := jobs
	goArgs := []string{"--queue", queue, "--concurrency", strconv.Itoa(concurrency), "--sleep", "0.2",
		"--tries", "5", "--memory", "0"}
	goEnv := []string{"RELWORKER_SLEEP=20ms"}

	php := r.phpWorker(t, "--queue="+queue, "--sleep=1", "--tries=5")
	started := time.Now()
	// inFlight maps each killed process to the reservations it left
	// behind: those in the reserved set right after its kill that were not
	// there at an earlier kill (an earlier killed worker's, not expired yet).
	inFlight := map[string][]reservation{}
	earlier := map[reservation]bool{}
	w := r.goWorker(t, goEnv, goArgs...)
	for i := range kills {
		// Each process runs jobs before it is killed: its first run, then
		// a random 50-300 ms.
		waitFor(t, 30*time.Second, "the Go worker's first run", func() bool {
			return count(t, app.q.DB(), "select count(*) from job_runs where worker = ?", "go:"+strconv.Itoa(w.pid())) > 0
		})
		time.Sleep(time.Duration(50+rand.IntN(250)) * time.Millisecond)
		// Keep jobs waiting at every kill whatever the machine's speed:
		// a kill of an idle worker tests nothing.
		if r.ready(t, queue) < topUpBelow {
			for u := range r.pushCopies(t, template, queue, topUp) {
				uuids[u] = true
			}
			pushed += topUp
		}
		if r.ready(t, queue) == 0 {
			t.Fatalf("the queue drained after %d kills although it was topped up", i)
		}
		w.kill()
		<-w.done
		var left []reservation
		for _, m := range r.reserved(t, queue) {
			if !earlier[m] {
				left = append(left, m)
			}
			earlier[m] = true
		}
		inFlight["go:"+strconv.Itoa(w.pid())] = left
		w = r.goWorker(t, goEnv, goArgs...)
	}
	killPhase := time.Since(started)
	waitFor(t, 3*time.Minute, "the queue to empty", func() bool { return r.left(t, queue) == 0 })
	wall := time.Since(started)
	w.stop(t, 30*time.Second)
	php.stop(t, 30*time.Second)

	if f := failedRows(t, app.q.DB(), "failed_jobs"); len(f) != 0 {
		t.Errorf("%d jobs failed; first: %.400s", len(f), f[0].Exception)
	}
	all := runsOf(t, noopClass)
	res := checkCrashRuns(t, all, uuids, inFlight)
	t.Logf("redis crash: %d jobs, %d SIGKILLs in %s, drained in %s; runs: %d (go %d, php %d); "+
		"%d jobs ran twice (exactly-once violations), all among the %d jobs Go had in flight at the kills "+
		"(per kill: in flight %d-%d, re-run %d-%d); %d runs on attempt > 1; lost %d",
		pushed, kills, killPhase.Round(time.Millisecond), wall.Round(time.Millisecond), len(all), res.byWorker["go"], res.byWorker["php"],
		res.rerun, res.inFlight, res.minInFlight, res.maxInFlight, res.minRerun, res.maxRerun, res.attemptAbove1, pushed-res.distinct)
}

// crashResult is what checkCrashRuns counted.
type crashResult struct {
	byWorker                 map[string]int
	distinct                 int // jobs that ran
	rerun                    int // jobs that ran more than once
	attemptAbove1            int
	inFlight                 int // Go's reservations at the kills
	minInFlight, maxInFlight int
	minRerun, maxRerun       int
}

// checkCrashRuns checks the runs of a crash test on Redis against the
// reservations each killed process left (inFlight, by "go:<pid>"): every
// pushed job ran, no (uuid, attempt) twice, attempts grow, and a job ran
// again only after a run by a killed process that had it in flight.
func checkCrashRuns(t *testing.T, all []run, uuids map[string]bool, inFlight map[string][]reservation) crashResult {
	t.Helper()
	res := crashResult{byWorker: map[string]int{}, minInFlight: 1 << 30, minRerun: 1 << 30}
	byUUID := map[string][]run{}
	phpRan := map[reservation]bool{}
	for _, r := range all {
		if !uuids[r.UUID] {
			t.Errorf("a run of a job nobody pushed: %+v", r)
		}
		byUUID[r.UUID] = append(byUUID[r.UUID], r)
		kind := r.Worker
		if strings.HasPrefix(kind, "go:") {
			kind = "go"
		} else {
			phpRan[reservation{r.UUID, r.Attempt}] = true
		}
		res.byWorker[kind]++
	}
	res.distinct = len(byUUID)
	if len(byUUID) != len(uuids) {
		t.Errorf("%d distinct jobs ran, want %d: %d lost", len(byUUID), len(uuids), len(uuids)-len(byUUID))
	}
	// Go's in flight at each kill: the reserved members but PHP's (the
	// one PHP ran under that very attempt).
	goHeld := map[string]map[string]bool{}
	for pid, members := range inFlight {
		goHeld[pid] = map[string]bool{}
		for _, m := range members {
			if !phpRan[m] {
				goHeld[pid][m.UUID] = true
			}
		}
		n := len(goHeld[pid])
		res.inFlight += n
		res.minInFlight, res.maxInFlight = min(res.minInFlight, n), max(res.maxInFlight, n)
	}
	rerunsPerKill := map[string]int{}
	for uuid, rs := range byUUID {
		sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
		seen := map[int64]bool{}
		for i, r := range rs {
			if seen[r.Attempt] {
				t.Errorf("job %s ran twice on attempt %d: one reservation was run twice: %+v", uuid, r.Attempt, rs)
			}
			seen[r.Attempt] = true
			if i > 0 && r.Attempt <= rs[i-1].Attempt {
				t.Errorf("job %s: attempts do not grow from run to run: %+v", uuid, rs)
			}
			if r.Attempt > 1 {
				res.attemptAbove1++
			}
		}
		if len(rs) == 1 {
			continue
		}
		res.rerun++
		for _, r := range rs[:len(rs)-1] {
			held, killed := goHeld[r.Worker]
			switch {
			case !killed:
				t.Errorf("job %s ran again although its run by %s was not interrupted by a kill: %+v", uuid, r.Worker, rs)
			case !held[uuid]:
				t.Errorf("job %s ran again after a kill of %s, which did not have it in flight (reserved) at the kill: %+v", uuid, r.Worker, rs)
			}
			rerunsPerKill[r.Worker]++
		}
	}
	for pid := range inFlight {
		n := rerunsPerKill[pid]
		res.minRerun, res.maxRerun = min(res.minRerun, n), max(res.maxRerun, n)
	}
	return res
}
