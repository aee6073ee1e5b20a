package e2e

import (
	"encoding/json"
	"testing"
)

// TestChainAlternatingSides (e): a Bus::chain of three ChainLinkJobs runs
// link by link: PHP, then Go, then PHP. Each side pushes the next link,
// and the link Go pushed is the one PHP runs last.
func TestChainAlternatingSides(t *testing.T) { onEachDB(t, testChainAlternatingSides) }

func testChainAlternatingSides(t *testing.T, s *suite) {
	s.artisan(t, "app:dispatch", "chain")
	link := `App\Jobs\ChainLinkJob`

	s.phpWork(t, "--once", "--queue=chains")
	s.work(t, "--once", "--queue", "chains", s.route(link))
	pushedByGo := s.jobs(t)
	if len(pushedByGo) != 1 || pushedByGo[0].Queue != "chains" || pushedByGo[0].Attempts != 0 {
		t.Fatalf("after Go ran link 2, jobs are %+v; want the third link on chains", pushedByGo)
	}
	s.phpWork(t, "--once", "--queue=chains")

	if left := s.jobs(t); len(left) != 0 {
		t.Errorf("jobs left: %+v", left)
	}
	runs := s.runs(t)
	want := []struct {
		worker string
		step   int64
		label  string
	}{{"php", 1, "first"}, {"go", 2, "second"}, {"php", 3, "third"}}
	if len(runs) != len(want) {
		t.Fatalf("runs %+v, want %d", runs, len(want))
	}
	seen := map[string]bool{}
	for i, w := range want {
		r := runs[i]
		if r.Worker != w.worker || num(t, r.Result["step"]) != w.step || r.Result["label"] != w.label ||
			num(t, r.Result["remaining"]) != int64(2-i) || r.Attempt != 1 || r.Class != link {
			t.Errorf("run %d: %+v, want %s running step %d (%s) with %d links left", i+1, r, w.worker, w.step, w.label, 2-i)
		}
		if seen[r.UUID] {
			t.Errorf("link %d reuses uuid %s", i+1, r.UUID)
		}
		seen[r.UUID] = true
	}
	if runs[2].UUID != pushedByGo[0].UUID || runs[2].Result["queue"] != "chains" {
		t.Errorf("PHP's last run %+v is not the link Go pushed (%s) on chains", runs[2], pushedByGo[0].UUID)
	}
}

// TestBatchSplitBetweenSides (e): a batch without callbacks, one member
// run by Go and one by PHP, ends with the counters of the same batch run
// by PHP alone.
func TestBatchSplitBetweenSides(t *testing.T) { onEachDB(t, testBatchSplitBetweenSides) }

func testBatchSplitBetweenSides(t *testing.T, s *suite) {
	member := `App\Jobs\BatchMemberJob`
	mixed := dispatchedBatch(t, s.artisan(t, "app:dispatch", "batch"))
	s.work(t, "--once", s.route(member))
	if rows := s.jobs(t); len(rows) != 1 || rows[0].Attempts != 0 {
		t.Fatalf("after Go's --once, jobs are %+v; want one untouched member", rows)
	}
	s.phpWork(t, "--once")

	phpOnly := dispatchedBatch(t, s.artisan(t, "app:dispatch", "batch"))
	s.phpWork(t, "--stop-when-empty")

	got, err := s.batch(t, mixed)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.batch(t, phpOnly)
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 2 || got.Pending != want.Pending || got.Failed != want.Failed || got.FailedJobIDs != want.FailedJobIDs ||
		got.FinishedAt.Valid != want.FinishedAt.Valid || got.CancelledAt.Valid != want.CancelledAt.Valid {
		t.Errorf("batch run by Go and PHP: %+v\nbatch run by PHP alone:  %+v", got, want)
	}
	if want.Pending != 0 || !want.FinishedAt.Valid {
		t.Errorf("PHP left its batch unfinished: %+v", want)
	}
	workers := map[string]string{}
	for _, r := range s.runs(t) {
		if r.Result["batchId"] == mixed {
			workers[r.Worker] += r.UUID
		}
	}
	if len(workers) != 2 {
		t.Errorf("the mixed batch's members ran on %v, want one on each side", workers)
	}
}

// TestBatchFailureInGoCancelsForPHP (e): Go fails the first member of a
// batch that does not allow failures; Laravel's rules cancel the batch, and
// the PHP member that runs afterwards sees it cancelled. The counters are
// Laravel's: failed 1, pending still 2 - 1 (a failure never decrements
// it), the failed uuid listed, cancelled and finished.
func TestBatchFailureInGoCancelsForPHP(t *testing.T) { onEachDB(t, testBatchFailureInGoCancelsForPHP) }

func testBatchFailureInGoCancelsForPHP(t *testing.T, s *suite) {
	member := `App\Jobs\BatchMemberJob`
	id := dispatchedBatch(t, s.artisan(t, "app:dispatch", "batch"))
	s.work(t, "--once", "--tries", "1", s.route(member, "-fail", "member 1 failed in Go", "-when", "n=1"))
	failed := s.failed(t)
	if len(failed) != 1 {
		t.Fatalf("%d failed jobs after Go, want 1", len(failed))
	}
	s.phpWork(t, "--once")

	b, err := s.batch(t, id)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := json.Marshal([]string{failed[0].UUID})
	if b.Total != 2 || b.Pending != 1 || b.Failed != 1 || b.FailedJobIDs != string(ids) || !b.CancelledAt.Valid || !b.FinishedAt.Valid {
		t.Errorf("batch %+v; want total 2, pending 1, failed 1, failed_job_ids %s, cancelled and finished", b, ids)
	}
	runs := s.runs(t)
	if len(runs) != 2 || runs[0].Worker != "go" || runs[1].Worker != "php" || runs[1].Result["skipped"] != "cancelled" {
		t.Errorf("runs %+v; want Go's failed run of member 1, then PHP's run of member 2 seeing the batch cancelled", runs)
	}
}
