package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/payload"
)

const (
	batchedSleepClass = `App\Jobs\BatchedSleepJob`
	batchMemberClass  = `App\Jobs\BatchMemberJob`
)

// TestRedisFrozenWorker is TestFrozenWorker on Laravel's Redis queue, for
// every outcome Go can write: a SleepJob (BatchedSleepJob, a SleepJob with
// Batchable) heads a chain (it, then a BatchMemberJob, which only PHP
// runs) inside a batch, dispatched by PHP onto a redis queue. Go claims it
// and its handler works 4 s, then succeeds, fails (on its last attempt,
// --tries 1) or asks for a release. The Go process is frozen (SIGSTOP) as
// soon as the handler has started, past retry_after (3 s on both sides),
// or stops itself as the handler returns (its outcome is then written as
// soon as it runs again, racing the lease refresh); `php artisan
// queue:work redis` moves the expired reservation back, runs the job (1 s)
// and pushes the chain's next link; Go is thawed after PHP finished, or
// while PHP runs the job. When it thaws, Go must write nothing: no delete
// of PHP's reservation, no released copy, no failed_jobs row, no second
// chain link, no batch counter. It logs the lost reservation once and
// counts it.
func TestRedisFrozenWorker(t *testing.T) {
	const retryAfter = 3
	r := needRedisApp(t, retryAfter)
	for _, then := range []string{"success", "fail", "release"} {
		for _, thaw := range []string{"after PHP finished", "while PHP runs it", "at the handler's end, after PHP finished"} {
			atEnd := strings.HasPrefix(thaw, "at the handler's end")
			t.Run(then+"/"+thaw, func(t *testing.T) {
				for _, table := range []string{"failed_jobs", "job_runs", "job_batches"} {
					if _, err := app.q.DB().Exec("delete from " + table); err != nil {
						t.Fatal(err)
					}
				}
				queue := fmt.Sprintf("frozen-%s-%d", then, len(thaw))
				batchID := strings.TrimSpace(r.php(t, `$sleep = new App\Jobs\BatchedSleepJob(1); $sleep->timeout = 60; `+
					`echo Illuminate\Support\Facades\Bus::batch([[$sleep, new App\Jobs\BatchMemberJob(2)]])`+
					`->onConnection('redis')->onQueue('`+queue+`')->dispatch()->id;`))
				list, err := r.rc.LRange(context.Background(), r.cfg.Keys(queue).Ready, 0, -1).Result()
				if err != nil || len(list) != 1 {
					t.Fatalf("the dispatch left %q on the list (%v)", list, err)
				}
				p, err := payload.Parse([]byte(list[0]))
				if err != nil || p.DisplayName != batchedSleepClass {
					t.Fatalf("dispatched %s: %v", p.DisplayName, err)
				}
				uuid := p.UUID
				env := []string{"RELWORKER_SLEEP_SECONDS=4"}
				tries := "5"
				switch then {
				case "fail":
					// Its last attempt: Go fails it (failed_jobs, the batch's
					// failure) rather than releasing it.
					env, tries = append(env, "RELWORKER_SLEEP_THEN=fail"), "1"
				case "release":
					env = append(env, "RELWORKER_SLEEP_THEN=release")
				}
				if atEnd {
					env = append(env, "RELWORKER_SLEEP_FREEZE=end")
				}
				goProc := r.goWorker(t, env, "--queue", queue, "--sleep", "0.1", "--memory", "0", "--tries", tries)
				if atEnd {
					waitFor(t, 20*time.Second, "the Go worker to stop itself as its handler returns", func() bool {
						c := tallies(t, batchedSleepClass)[uuid]
						return c != nil && c.goEnds == 1 && processStopped(goProc.pid())
					})
				} else {
					waitFor(t, 20*time.Second, "Go to start the job", func() bool { c := tallies(t, batchedSleepClass)[uuid]; return c != nil && c.goStarts == 1 })
					goProc.signal(syscall.SIGSTOP)
				}
				frozen := time.Now()
				php := r.phpWorker(t, "--queue="+queue, "--sleep=1", "--tries=5")
				if !waitUntil(30*time.Second, func() bool { return tallies(t, batchedSleepClass)[uuid].phpStarts == 1 }) {
					members, _ := r.rc.ZRangeWithScores(context.Background(), r.cfg.Keys(queue).Reserved, 0, -1).Result()
					t.Fatalf("PHP did not reclaim and start the job within 30 s (now %d; reserved %v; Go stopped: %v)\nPHP:\n%s\nGo:\n%s",
						time.Now().Unix(), members, processStopped(goProc.pid()), tail(php.out.String()), tail(goProc.out.String()))
				}
				phpDone := func() bool {
					return tallies(t, batchedSleepClass)[uuid].phpEnds == 1 && len(runsOf(t, batchMemberClass)) == 1 && r.left(t, queue) == 0
				}
				if thaw != "while PHP runs it" {
					waitFor(t, 30*time.Second, "PHP to finish the job and the chain", phpDone)
				}
				watch := r.watchReserved(t, queue, uuid)
				goProc.signal(syscall.SIGCONT)
				frozenFor := time.Since(frozen)
				// Not fatal: when something goes wrong, the checks below say what.
				waitUntil(20*time.Second, func() bool { return lostUUIDs(goProc.out.String())[uuid] > 0 })
				waitUntil(30*time.Second, phpDone)
				goProc.stop(t, 30*time.Second)
				php.stop(t, 30*time.Second)

				deleted, maxCopies := watch.finish()
				if deleted {
					t.Error("PHP's reservation left the reserved set while PHP was running the job: Go deleted it")
				}
				if maxCopies > 1 {
					t.Errorf("up to %d copies of the job in Redis at once: Go's release added one", maxCopies)
				}
				c := tallies(t, batchedSleepClass)[uuid]
				if c.goStarts != 1 || c.phpStarts != 1 || c.phpEnds != 1 {
					t.Errorf("the job ran %+v; want one run on Go (dropped) and one on PHP (finished)", *c)
				}
				if lost := lostUUIDs(goProc.out.String())[uuid]; lost != 1 {
					t.Errorf("Go logged its lost reservation %d times, want once", lost)
				}
				if n := stoppedLine(t, goProc)["lost"]; n != float64(1) {
					t.Errorf("the Go worker's final line says lost=%v, want 1", n)
				}
				if links := runsOf(t, batchMemberClass); len(links) != 1 {
					t.Errorf("the chain's second link ran %d times, want once (pushed by PHP): %+v", len(links), links)
				}
				if f := failedRows(t, app.q.DB(), "failed_jobs"); len(f) != 0 {
					t.Errorf("%d failed jobs; first: %.300s", len(f), f[0].Exception)
				}
				if left := r.left(t, queue); left != 0 {
					t.Errorf("%d jobs left in Redis", left)
				}
				var total, pending, failedJobs int
				var cancelled, finished sql.NullInt64
				if err := app.q.DB().QueryRow("select total_jobs, pending_jobs, failed_jobs, cancelled_at, finished_at from job_batches where id = ?", batchID).
					Scan(&total, &pending, &failedJobs, &cancelled, &finished); err != nil {
					t.Fatal(err)
				}
				if total != 2 || pending != 0 || failedJobs != 0 || cancelled.Valid || !finished.Valid {
					t.Errorf("batch: total %d, pending %d, failed %d, cancelled %v, finished %v; want 2, 0, 0, not cancelled, finished",
						total, pending, failedJobs, cancelled.Valid, finished.Valid)
				}
				var op any
				if recs := logRecords(goProc.out.String(), "reservation lost"); len(recs) > 0 {
					op = recs[0]["op"]
				}
				t.Logf("frozen %s (retry_after %d s), then %s, thawed %s: Go's outcome dropped (found by %v), runs %+v",
					frozenFor.Round(100*time.Millisecond), retryAfter, then, thaw, op, *c)
			})
		}
	}
}

// reservedWatch samples a queue's keys while PHP runs a job: PHP's
// reservation (attempt 2) gone while PHP's run has started and not ended
// means someone else deleted it; more than one copy of the job in Redis
// means one was added.
type reservedWatch struct {
	stop, done chan struct{}
	mu         sync.Mutex
	deleted    bool
	maxCopies  int
}

func (r *redisRel) watchReserved(t *testing.T, queue, uuid string) *reservedWatch {
	w := &reservedWatch{stop: make(chan struct{}), done: make(chan struct{})}
	k := r.cfg.Keys(queue)
	ctx := context.Background()
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			// Keys first, then runs: a run that has not ended after its
			// member was seen gone was still running when it went.
			list, err1 := r.rc.LRange(ctx, k.Ready, 0, -1).Result()
			delayed, err2 := r.rc.ZRange(ctx, k.Delayed, 0, -1).Result()
			reserved, err3 := r.rc.ZRange(ctx, k.Reserved, 0, -1).Result()
			if err1 != nil || err2 != nil || err3 != nil {
				continue
			}
			copies, phpHeld := 0, false
			for _, m := range append(append(list, delayed...), reserved...) {
				if strings.Contains(m, uuid) {
					copies++
				}
			}
			for _, m := range reserved {
				if strings.Contains(m, uuid) && strings.Contains(m, `"attempts":2`) {
					phpHeld = true
				}
			}
			var c *tally
			func() {
				defer func() { _ = recover() }()
				c = tallies(t, batchedSleepClass)[uuid]
			}()
			w.mu.Lock()
			w.maxCopies = max(w.maxCopies, copies)
			if !phpHeld && c != nil && c.phpStarts > 0 && c.phpEnds < c.phpStarts {
				w.deleted = true
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *reservedWatch) finish() (deleted bool, maxCopies int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deleted, w.maxCopies
}

// processStopped says whether pid is stopped by a signal (state T in
// /proc/<pid>/stat).
func processStopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces, the state follows the last ')'.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	return strings.HasPrefix(strings.TrimSpace(rest), "T")
}
