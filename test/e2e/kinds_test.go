package e2e

import (
	"sort"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/payload"
)

// allQueues are the queues `app:dispatch all` uses.
const allQueues = "default,high,chains,batches"

// goRunnable are the classes test (a) gives Go handlers; the rest of
// `app:dispatch all` is left to PHP.
var goRunnable = []string{
	`App\Jobs\ScalarsJob`, `App\Jobs\EncryptedJob`, `App\Jobs\EnumsDatesJob`, `App\Jobs\ModelsJob`,
	`App\Jobs\PrivatePropsJob`, `App\Jobs\DelayedJob`, `App\Jobs\BatchMemberJob`, `App\Jobs\ChainLinkJob`,
}

// TestAllKindsSplitBetweenGoAndPHP (a): every kind but sleep is dispatched
// by PHP; Go runs the classes it has handlers for (batch members too: the
// bridge, installed in the test app, runs their batches' callbacks in
// PHP) and leaves every other row exactly as it was; `queue:work` runs the
// rest, and the hook jobs Go pushed. Every job runs once, on one side,
// failures land where Laravel puts them, and the batch callbacks run as
// when PHP ran the batches.
func TestAllKindsSplitBetweenGoAndPHP(t *testing.T) { onEachDB(t, testAllKindsSplitBetweenGoAndPHP) }

func testAllKindsSplitBetweenGoAndPHP(t *testing.T, s *suite) {
	out := s.artisan(t, "app:dispatch", "all")
	plainBatch := batchIDAfter(t, out, "dispatched batch:")
	failBatch := batchIDAfter(t, out, "dispatched batch-fail:")
	if n := s.exec(t, "delete from jobs where payload like ?", `%SleepJob%`); n != 1 {
		t.Fatalf("deleted %d SleepJob rows, want 1", n)
	}
	s.makeAvailable(t) // DelayedJob: 10 s on queue high
	before := s.jobs(t)

	args := []string{"--stop-when-empty", "--queue", allQueues, "--concurrency", "4"}
	for _, c := range goRunnable {
		if c == `App\Jobs\BatchMemberJob` {
			// Throws when $fail, as in PHP.
			args = append(args, s.route(c, "-fail", "Batch member failed", "-when", "fail=true"))
			continue
		}
		args = append(args, s.route(c))
	}
	s.work(t, args...)

	forGo := map[string]bool{}
	// cancelled: the batch-fail member a cancelled batch may skip. Go
	// runs the two members at once; if the failing one is recorded
	// first, the other finds the batch cancelled and is deleted without
	// running (PHP's BatchMemberJob returns early then, and records it).
	cancelled := ""
	var leftForPHP []jobRow
	for _, j := range before {
		if isGoRunnable(j.Class) {
			forGo[j.UUID] = true
			if j.Class == `App\Jobs\BatchMemberJob` && batchIDOf(t, j) == failBatch && !strings.Contains(j.Payload, `s:4:\"fail\";b:1;`) {
				cancelled = j.UUID
			}
		} else {
			leftForPHP = append(leftForPHP, j)
		}
	}
	// 6 classes once, 7 batch members (plain 2, with callbacks 3, failing
	// 2), 2 first chain links.
	if len(forGo) != 15 || cancelled == "" {
		t.Fatalf("%d jobs for Go, want 15 (the batch-fail member that may be skipped: %q)", len(forGo), cancelled)
	}
	assertUntouched(t, leftForPHP, s.queuedJobs(t))
	goRuns := s.runs(t)
	byUUID := runsByUUID(goRuns)
	skipped := 0
	for uuid := range forGo {
		if rs := byUUID[uuid]; uuid == cancelled && len(rs) == 0 {
			skipped++
		} else if len(rs) != 1 || rs[0].Worker != "go" || rs[0].Attempt != 1 {
			t.Errorf("job %s: runs %+v, want one by go on attempt 1", uuid, rs)
		}
	}
	if got := classCounts(goRuns); got[`App\Jobs\ChainLinkJob`] != 6 || len(goRuns)+skipped != 19 {
		t.Errorf("Go ran %v (%d runs, %d skipped), want 19 runs with all 6 chain links", got, len(goRuns), skipped)
	}
	if b, err := s.batch(t, plainBatch); err != nil || b.Pending != 0 || b.Failed != 0 || !b.FinishedAt.Valid {
		t.Errorf("batch run by Go: %+v, %v; want pending 0, failed 0, finished", b, err)
	}

	s.phpWork(t, "--stop-when-empty", "--queue="+allQueues)

	if left := s.jobs(t); len(left) != 0 {
		t.Fatalf("jobs left after queue:work: %+v", left)
	}
	runs := s.runs(t)
	byUUID = runsByUUID(runs)
	for _, j := range before {
		rs := byUUID[j.UUID]
		wantRuns, wantWorker := 1, "php"
		if forGo[j.UUID] {
			wantWorker = "go"
		}
		if j.UUID == cancelled && skipped == 1 {
			wantRuns = 0
		}
		if j.Class == `App\Jobs\MaxExceptionsJob` {
			wantRuns = 2 // throws, released with backoff 0, fails on its 2nd exception
		}
		if len(rs) != wantRuns {
			t.Errorf("%s %s ran %d times, want %d: %+v", j.Class, j.UUID, len(rs), wantRuns, rs)
			continue
		}
		for i, r := range rs {
			if r.Worker != wantWorker || r.Attempt != int64(i+1) {
				t.Errorf("%s run %d: worker %s attempt %d, want %s %d", j.Class, i+1, r.Worker, r.Attempt, wantWorker, i+1)
			}
		}
	}
	callbacks := classCounts(runs)
	if callbacks["batch:then"] != 1 || callbacks["batch:catch"] != 1 || callbacks["batch:finally"] != 2 {
		t.Errorf("batch callbacks ran %v, want then 1, catch 1, finally 2", callbacks)
	}

	wantFailed := map[string]bool{`App\Jobs\FailingJob`: true, `App\Jobs\MaxExceptionsJob`: true}
	var failedClasses []string
	for _, f := range s.failed(t) {
		p, err := payload.Parse([]byte(f.Payload))
		if err != nil {
			t.Fatal(err)
		}
		failedClasses = append(failedClasses, p.DisplayName)
		prefix := "RuntimeException: "
		if p.DisplayName == `App\Jobs\BatchMemberJob` {
			prefix = `LaraWorker\ExecException: ` // failed in Go
		}
		if f.Connection != "database" || f.Queue != "default" || !strings.HasPrefix(f.Exception, prefix) {
			t.Errorf("failed job %s: connection %q queue %q exception %.80q", p.DisplayName, f.Connection, f.Queue, f.Exception)
		}
		if p.DisplayName == `App\Jobs\BatchMemberJob` {
			if batchIDOf(t, jobRow{JobRow: testdb.JobRow{Payload: f.Payload}}) == plainBatch {
				t.Errorf("a member of the batch Go ran failed")
			}
			continue
		}
		if !wantFailed[p.DisplayName] {
			t.Errorf("unexpected failed job %s", p.DisplayName)
		}
	}
	sort.Strings(failedClasses)
	if len(failedClasses) != 3 {
		t.Errorf("failed_jobs holds %v, want FailingJob, MaxExceptionsJob and the failing batch member", failedClasses)
	}
}

func isGoRunnable(class string) bool {
	for _, c := range goRunnable {
		if c == class {
			return true
		}
	}
	return false
}

// batchIDAfter finds the batch id on the output line starting with prefix.
func batchIDAfter(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, prefix) {
			return dispatchedBatch(t, line)
		}
	}
	t.Fatalf("no %q line in:\n%s", prefix, out)
	return ""
}

// batchIDOf reads the command's public $batchId.
func batchIDOf(t *testing.T, j jobRow) string {
	t.Helper()
	p, err := payload.Parse([]byte(j.Payload))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := payload.DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if id := cmd.Queueable().BatchID; id != nil {
		return *id
	}
	return ""
}

// assertUntouched checks that the rows a worker should not have touched
// are all still there, byte for byte, and nothing else is.
func assertUntouched(t *testing.T, want, got []jobRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d jobs left, want the %d untouched ones", len(got), len(want))
	}
	gotByID := map[int64]jobRow{}
	for _, j := range got {
		gotByID[j.ID] = j
	}
	for _, w := range want {
		g, ok := gotByID[w.ID]
		switch {
		case !ok:
			t.Errorf("job %d (%s) is gone", w.ID, w.Class)
		case g != w:
			t.Errorf("job %d (%s) changed:\n got  %+v\n want %+v", w.ID, w.Class, g, w)
		case g.Attempts != 0 || g.ReservedAt.Valid:
			t.Errorf("job %d (%s): attempts %d reserved_at %v, want 0 and null", g.ID, g.Class, g.Attempts, g.ReservedAt)
		}
	}
}

func classCounts(runs []runRow) map[string]int {
	m := map[string]int{}
	for _, r := range runs {
		m[r.Class]++
	}
	return m
}
