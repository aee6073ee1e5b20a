package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
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
// or as the handler returns (held there until frozen; its outcome is then
// written as soon as it runs again, racing the lease refresh); `php artisan
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
		for _, when := range []string{"mid-run, thawed after PHP finished", "mid-run, thawed while PHP runs it", "at the handler's end, thawed after PHP finished"} {
			atEnd := strings.HasPrefix(when, "at the handler's end")
			whilePHP := strings.HasSuffix(when, "while PHP runs it")
			t.Run(then+"/"+when, func(t *testing.T) {
				for _, table := range []string{"failed_jobs", "job_runs", "job_batches"} {
					if _, err := app.q.DB().Exec("delete from " + table); err != nil {
						t.Fatal(err)
					}
				}
				queue := fmt.Sprintf("frozen-%s-%d", then, len(when))
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
				gate := filepath.Join(t.TempDir(), "gate")
				if atEnd {
					env = append(env, "RELWORKER_SLEEP_GATE="+gate)
				}
				goProc := r.goWorker(t, env, "--queue", queue, "--sleep", "0.1", "--memory", "0", "--tries", tries)
				phase := func(c *tally) int { return c.goStarts }
				if atEnd {
					phase = func(c *tally) int { return c.goEnds } // held there by the gate
				}
				waitFor(t, 20*time.Second, "Go to run the job", func() bool { c := tallies(t, batchedSleepClass)[uuid]; return c != nil && phase(c) == 1 })
				goProc.signal(syscall.SIGSTOP)
				waitFor(t, 10*time.Second, "every thread of the Go worker to stop", func() bool { return processStopped(goProc.pid()) })
				if atEnd {
					if err := os.WriteFile(gate, nil, 0o644); err != nil {
						t.Fatal(err)
					}
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
				if !whilePHP {
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
				t.Logf("%s, frozen %s (retry_after %d s), %s: Go's outcome dropped (found by %v), runs %+v",
					then, frozenFor.Round(100*time.Millisecond), retryAfter, when, op, *c)
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

// processStopped says whether every thread of pid is stopped by a signal
// (state T in /proc/<pid>/task/*/stat): a SIGSTOP stops the threads one by
// one, each when it next runs.
func processStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			return false
		}
		// pid (comm) state ...: comm may hold spaces; the state follows the last ')'.
		if rest := string(b[strings.LastIndexByte(string(b), ')')+1:]); !strings.HasPrefix(strings.TrimSpace(rest), "T") {
			return false
		}
	}
	return true
}
