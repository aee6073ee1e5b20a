package reliability

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/faultproxy"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

const sleepClass = `App\Jobs\SleepJob`

// sleepJobs pushes n SleepJobs of seconds on queue, as dispatch() would
// (timeout 60 so only retry_after matters, 5 tries), and returns their
// ids by uuid.
func sleepJobs(t *testing.T, queue string, seconds, n int) map[string]int64 {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(sleepClass,
		phpserialize.Public("seconds", phpserialize.Int(int64(seconds))), phpserialize.Public("timeout", phpserialize.Int(60)),
		phpserialize.Public("tries", phpserialize.Int(5)), phpserialize.Public("queue", phpserialize.String(queue))), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uuids := pushCopies(t, app.q, raw, queue, n)
	ids := map[string]int64{}
	for id, uuid := range jobRowsOf(t, queue) {
		if uuids[uuid] {
			ids[uuid] = id
		}
	}
	if len(ids) != n {
		t.Fatalf("pushed %d jobs, found %d", n, len(ids))
	}
	return ids
}

// jobRowsOf maps the ids of queue's rows to their uuids.
func jobRowsOf(t *testing.T, queue string) map[int64]string {
	t.Helper()
	rows, err := app.q.DB().Query("select id, payload from jobs where queue = ?", queue)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			t.Fatal(err)
		}
		p, err := payload.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = p.UUID
	}
	return out
}

// jobRowState describes queue's rows as the database sees them now, for
// a failure message: why no worker takes a job.
func jobRowState(t *testing.T, queue string) string {
	t.Helper()
	rows, err := app.q.DB().Query("select id, attempts, reserved_at, available_at, unix_timestamp() from jobs where queue = ?", queue)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, attempts, available, now int64
		var reserved *int64
		if err := rows.Scan(&id, &attempts, &reserved, &available, &now); err != nil {
			return err.Error()
		}
		r := "null"
		if reserved != nil {
			r = strconv.FormatInt(*reserved-now, 10) + " s from now"
		}
		fmt.Fprintf(&b, "id %d attempts %d reserved_at %s available_at %d s from now; ", id, attempts, r, available-now)
	}
	return b.String() + openTransactions()
}

// openTransactions lists InnoDB's open transactions: a worker frozen
// inside one holds its row locks, which SKIP LOCKED claims pass by.
func openTransactions() string {
	rows, err := app.q.DB().Query("select trx_mysql_thread_id, trx_state, timestampdiff(second, trx_started, now()), trx_rows_locked, trx_isolation_level, coalesce(trx_query, '') from information_schema.innodb_trx")
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	b.WriteString("open transactions: ")
	for rows.Next() {
		var thread, age, locked int64
		var state, isolation, query string
		if err := rows.Scan(&thread, &state, &age, &locked, &isolation, &query); err != nil {
			return err.Error()
		}
		fmt.Fprintf(&b, "[thread %d %s for %d s, %d rows locked, %s, query %.200q] ", thread, state, age, locked, isolation, query)
	}
	return b.String()
}

// tally is what job_runs says about one job: SleepJob records a start and
// an end per run, with the worker that ran it.
type tally struct{ goStarts, goEnds, phpStarts, phpEnds int }

func tallies(t *testing.T, class string) map[string]*tally {
	t.Helper()
	out := map[string]*tally{}
	for _, r := range runsOf(t, class) {
		c := out[r.UUID]
		if c == nil {
			c = &tally{}
			out[r.UUID] = c
		}
		end := strings.Contains(r.Result, `"end"`)
		switch {
		case strings.HasPrefix(r.Worker, "go:") && end:
			c.goEnds++
		case strings.HasPrefix(r.Worker, "go:"):
			c.goStarts++
		case end:
			c.phpEnds++
		default:
			c.phpStarts++
		}
	}
	return out
}

// logRecords returns the JSON log lines of a worker's output whose
// message starts with msg.
func logRecords(out, msg string) []map[string]any {
	var recs []map[string]any
	for _, line := range strings.Split(out, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if m, _ := rec["message"].(string); strings.HasPrefix(m, msg) {
			recs = append(recs, rec)
		}
	}
	return recs
}

// lostUUIDs counts the worker's "reservation lost" log lines by uuid.
func lostUUIDs(out string) map[string]int {
	lost := map[string]int{}
	for _, rec := range logRecords(out, "reservation lost") {
		uuid, _ := rec["uuid"].(string)
		lost[uuid]++
	}
	return lost
}

// stoppedLine is the worker's final "worker stopped" log line.
func stoppedLine(t *testing.T, p *proc) map[string]any {
	t.Helper()
	recs := logRecords(p.out.String(), "worker stopped")
	if len(recs) != 1 {
		t.Fatalf("%s: %d \"worker stopped\" lines; output:\n%s", p.name, len(recs), tail(p.out.String()))
	}
	return recs[0]
}

// rowWatch samples queue's rows while PHP runs the jobs it reclaimed:
// a row that disappears while its PHP run has started and not ended was
// deleted under PHP by someone else; more rows than jobs means a
// duplicate was inserted.
type rowWatch struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	deleted map[string]bool // uuids whose row vanished under a running PHP run
	maxRows int
	samples int
}

func watchRows(t *testing.T, queue string, ids map[string]int64) *rowWatch {
	w := &rowWatch{stop: make(chan struct{}), done: make(chan struct{}), deleted: map[string]bool{}}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			// Rows first, then runs: a run that has not ended after its row
			// was seen gone was still running when the row went.
			present, err := presentIDs(queue)
			if err != nil {
				continue
			}
			var counts map[string]*tally
			func() {
				defer func() { _ = recover() }()
				counts = tallies(t, sleepClass)
			}()
			w.mu.Lock()
			w.samples++
			w.maxRows = max(w.maxRows, len(present))
			for uuid, id := range ids {
				c := counts[uuid]
				if !present[id] && c != nil && c.phpStarts > 0 && c.phpEnds < c.phpStarts {
					w.deleted[uuid] = true
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func presentIDs(queue string) (map[int64]bool, error) {
	rows, err := app.q.DB().Query("select id from jobs where queue = ?", queue)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

func (w *rowWatch) finish() (deleted []string, maxRows, samples int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for uuid := range w.deleted {
		deleted = append(deleted, uuid)
	}
	return deleted, w.maxRows, w.samples
}

// checkReclaimed asserts the end state of a test where PHP reclaimed
// every job Go held: each job ran once on Go (whose outcome was dropped
// and counted as lost) and once on PHP, which finished it; no job row is
// left, none was duplicated, none failed, and no row was deleted under a
// running PHP run.
func checkReclaimed(t *testing.T, goProc *proc, ids map[string]int64, watch *rowWatch) {
	t.Helper()
	deleted, maxRows, samples := watch.finish()
	if len(deleted) > 0 {
		t.Errorf("rows deleted while PHP was running their jobs: %v", deleted)
	}
	if maxRows > len(ids) {
		t.Errorf("up to %d rows on the queue for %d jobs: a duplicate was inserted", maxRows, len(ids))
	}
	if samples == 0 {
		t.Error("the row watch took no sample")
	}
	lost := lostUUIDs(goProc.out.String())
	counts := tallies(t, sleepClass)
	for uuid := range ids {
		c := counts[uuid]
		if c == nil || c.goStarts != 1 || c.phpStarts != 1 || c.phpEnds != 1 {
			t.Errorf("job %s ran %+v; want one run on Go (dropped) and one on PHP (finished)", uuid, c)
		}
		if lost[uuid] != 1 {
			t.Errorf("job %s: Go logged its lost reservation %d times, want once", uuid, lost[uuid])
		}
	}
	if left := count(t, app.q.DB(), "select count(*) from jobs"); left != 0 {
		t.Errorf("%d job rows left", left)
	}
	if f := failedRows(t, app.q.DB(), "failed_jobs"); len(f) != 0 {
		t.Errorf("%d failed jobs; first: %.300s", len(f), f[0].Exception)
	}
	if n := stoppedLine(t, goProc)["lost"]; n != float64(len(ids)) {
		t.Errorf("the Go worker's final line says lost=%v, want %d", n, len(ids))
	}
}

// TestFrozenWorker is the scenario: Go claims a job whose handler
// works 4 s and then asks for a release; the Go process is frozen
// (SIGSTOP) during the run, past retry_after (3 s); `php artisan
// queue:work` reclaims the job and runs it; Go is thawed either after PHP
// finished the job or while PHP still runs it. (PHP runs the job for 1 s,
// well within retry_after, so PHP's own reservation, which nothing
// refreshes, does not expire while PHP runs it: Laravel's issue #52493 is
// not this test's.) Go's release must write nothing: no copy of a job
// that already succeeded, no delete of the row PHP holds. Go logs the
// lost reservation once and counts it. (Go polls with free slots, so the
// freeze may also catch it inside a claim, between the locking select and
// the reserve: on MariaDB that claim locks the running job's row too,
// which PHP's SKIP LOCKED then passed by until the server ended the idle
// session; sqldb bounds that to 10 s.)
func TestFrozenWorker(t *testing.T) {
	needApp(t)
	needPHP(t)
	const retryAfter = 3
	for _, thaw := range []string{"after PHP finished", "while PHP runs it"} {
		t.Run(thaw, func(t *testing.T) {
			queue := "frozen" + strconv.Itoa(len(thaw))
			ids := sleepJobs(t, queue, 1, 1)
			var uuid string
			for u := range ids {
				uuid = u
			}
			goProc := goWorker(t, []string{"RELWORKER_SLEEP_THEN=release", "RELWORKER_SLEEP_SECONDS=4"}, "--queue", queue,
				"--retry-after", strconv.Itoa(retryAfter), "--sleep", "0.1", "--memory", "0", "--tries", "5")
			waitFor(t, 20*time.Second, "Go to start the job", func() bool { c := tallies(t, sleepClass)[uuid]; return c != nil && c.goStarts == 1 })
			goProc.signal(syscall.SIGSTOP)
			frozen := time.Now()
			php := phpWorker(t, retryAfter, "--queue="+queue, "--sleep=1", "--tries=5")
			if !waitUntil(30*time.Second, func() bool { return tallies(t, sleepClass)[uuid].phpStarts == 1 }) {
				t.Fatalf("PHP did not reclaim and start the job within 30 s (frozen %s ago); the job's row: %s\nPHP's output:\n%s\nGo's output:\n%s",
					time.Since(frozen).Round(100*time.Millisecond), jobRowState(t, queue), tail(php.out.String()), tail(goProc.out.String()))
			}
			if thaw == "after PHP finished" {
				waitFor(t, 30*time.Second, "PHP to finish the job", func() bool {
					return tallies(t, sleepClass)[uuid].phpEnds == 1 && count(t, app.q.DB(), "select count(*) from jobs where queue = ?", queue) == 0
				})
			}
			watch := watchRows(t, queue, ids)
			goProc.signal(syscall.SIGCONT)
			frozenFor := time.Since(frozen)
			// Not fatal: when something goes wrong, the checks below say what.
			waitUntil(20*time.Second, func() bool { return lostUUIDs(goProc.out.String())[uuid] > 0 })
			waitUntil(30*time.Second, func() bool {
				return tallies(t, sleepClass)[uuid].phpEnds == 1 && count(t, app.q.DB(), "select count(*) from jobs where queue = ?", queue) == 0
			})
			time.Sleep(2 * time.Second) // a copy would be claimed and run by now
			goProc.stop(t, 30*time.Second)
			php.stop(t, 30*time.Second)
			checkReclaimed(t, goProc, ids, watch)
			var op any
			if recs := logRecords(goProc.out.String(), "reservation lost"); len(recs) > 0 {
				op = recs[0]["op"]
			}
			t.Logf("frozen %s (retry_after %d s), thawed %s: Go's outcome dropped (found by %v), runs %+v",
				frozenFor.Round(100*time.Millisecond), retryAfter, thaw, op, *tallies(t, sleepClass)[uuid])
		})
	}
}

// TestPartitionedWorker: a proxy stalls (does not close) every connection
// of a Go worker running 3 jobs of 3 s, past retry_after (3 s); two `php
// artisan queue:work` reclaim the jobs and run them (1 s each, well within
// retry_after, so the two PHP workers do not take jobs from each other). When the network comes back,
// Go's held statements and its outcomes (a release each) reach the
// database: every one of them must find the reservation lost and write
// nothing, while some of the jobs are still running on PHP.
func TestPartitionedWorker(t *testing.T) {
	needApp(t)
	needPHP(t)
	const (
		queue      = "partition"
		retryAfter = 3
		jobs       = 3
	)
	ids := sleepJobs(t, queue, 1, jobs)
	proxy := faultproxy.New(t, "127.0.0.1:3306")
	goProc := goWorker(t, []string{"RELWORKER_SLEEP_THEN=release-first", "RELWORKER_SLEEP_SECONDS=3", "LARAWORKER_DB_HOST=127.0.0.1", "LARAWORKER_DB_PORT=" + strconv.Itoa(proxy.Port())},
		"--queue", queue, "--concurrency", strconv.Itoa(jobs), "--retry-after", strconv.Itoa(retryAfter), "--sleep", "0.1", "--memory", "0", "--tries", "5")
	started := func(which func(*tally) int) func() bool {
		return func() bool {
			counts := tallies(t, sleepClass)
			for uuid := range ids {
				if c := counts[uuid]; c == nil || which(c) < 1 {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, 20*time.Second, "Go to start every job", started(func(c *tally) int { return c.goStarts }))
	proxy.Stall()
	stalled := time.Now()
	php1 := phpWorker(t, retryAfter, "--queue="+queue, "--sleep=1", "--tries=5")
	php2 := phpWorker(t, retryAfter, "--queue="+queue, "--sleep=1", "--tries=5")
	waitFor(t, 60*time.Second, "PHP to reclaim and start every job", started(func(c *tally) int { return c.phpStarts }))
	watch := watchRows(t, queue, ids)
	running := 0
	for _, c := range tallies(t, sleepClass) {
		if c.phpStarts > c.phpEnds {
			running++
		}
	}
	proxy.Resume()
	stall := time.Since(stalled)
	// Not fatal: when something goes wrong, the checks below say what.
	waitUntil(30*time.Second, func() bool { return len(lostUUIDs(goProc.out.String())) == jobs })
	waitUntil(30*time.Second, func() bool {
		return started(func(c *tally) int { return c.phpEnds })() && count(t, app.q.DB(), "select count(*) from jobs where queue = ?", queue) == 0
	})
	time.Sleep(2 * time.Second) // a copy would be claimed and run by now
	goProc.stop(t, 30*time.Second)
	php1.stop(t, 30*time.Second)
	php2.stop(t, 30*time.Second)
	checkReclaimed(t, goProc, ids, watch)
	ops := map[string]int{}
	for _, rec := range logRecords(goProc.out.String(), "reservation lost") {
		ops[fmt.Sprint(rec["op"])]++
	}
	t.Logf("partition: %d jobs, Go's connections stalled %s (retry_after %d s); %d jobs still running on PHP when the network came back; Go dropped %d outcomes (found by %v)",
		jobs, stall.Round(100*time.Millisecond), retryAfter, running, len(lostUUIDs(goProc.out.String())), ops)
}
