package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// TestGoFailureRetriedByArtisan (b): jobs Go fails with tries 1 are what
// `queue:failed` lists, with Go's exception text in failed_jobs;
// `queue:retry all` puts them back, and each then runs where a handler is:
// the NoopJob in Go, the ScalarsJob (no Go handler any more) in PHP.
func TestGoFailureRetriedByArtisan(t *testing.T) { onEachDB(t, testGoFailureRetriedByArtisan) }

func testGoFailureRetriedByArtisan(t *testing.T, s *suite) {
	s.artisan(t, "app:dispatch", "noop")
	s.artisan(t, "app:dispatch", "scalars")
	before := s.jobs(t)
	const msg = "Go refused the job ✗"
	s.work(t, "--stop-when-empty", "--tries", "1",
		s.route(`App\Jobs\NoopJob`, "-fail", msg), s.route(`App\Jobs\ScalarsJob`, "-fail", msg))

	if left := s.queuedJobs(t); len(left) != 0 {
		t.Fatalf("jobs left after Go failed them: %+v", left)
	}
	if hooks := s.hookJobs(t); len(hooks) != 2 {
		t.Fatalf("%d hook jobs after Go failed 2 jobs, want one each (the bridge's RunFailureHooks)", len(hooks))
	}
	failed := failedByUUID(s.failed(t))
	listing := s.artisan(t, "queue:failed")
	for _, j := range before {
		f, ok := failed[j.UUID]
		if !ok {
			t.Fatalf("%s %s is not in failed_jobs", j.Class, j.UUID)
		}
		if f.Payload != j.Payload || f.Queue != "default" || f.Connection != "database" {
			t.Errorf("failed_jobs row of %s: queue %q connection %q, payload kept: %v", j.Class, f.Queue, f.Connection, f.Payload == j.Payload)
		}
		if !strings.Contains(f.Exception, msg) {
			t.Errorf("failed_jobs.exception of %s does not carry the handler's message:\n%s", j.Class, f.Exception)
		}
		if !strings.Contains(listing, j.UUID) || !strings.Contains(listing, j.Class) {
			t.Errorf("queue:failed does not list %s %s:\n%s", j.Class, j.UUID, listing)
		}
	}

	s.artisan(t, "queue:retry", "all")
	if n := len(s.failed(t)); n != 0 {
		t.Fatalf("%d failed jobs left after queue:retry all", n)
	}
	for _, j := range s.jobs(t) {
		if j.Attempts != 0 || j.ReservedAt.Valid || j.Queue != "default" {
			t.Errorf("retried %s: attempts %d reserved %v queue %s", j.Class, j.Attempts, j.ReservedAt, j.Queue)
		}
	}
	s.work(t, "--stop-when-empty", s.route(`App\Jobs\NoopJob`))
	s.phpWork(t, "--stop-when-empty")

	byUUID := runsByUUID(s.runs(t))
	for _, j := range before {
		rs := byUUID[j.UUID]
		want := "go"
		if j.Class == `App\Jobs\ScalarsJob` {
			want = "php"
		}
		if len(rs) != 2 || rs[0].Worker != "go" || rs[1].Worker != want || rs[1].Attempt != 1 {
			t.Errorf("%s runs %+v: want the failed Go run, then one by %s on attempt 1", j.Class, rs, want)
		}
	}
	if left := s.jobs(t); len(left) != 0 {
		t.Errorf("jobs left: %+v", left)
	}
}

// bridgeStamp is the bridge record's "at", the second its job was
// dispatched (bridge/src/Metadata/JobMetadata.php).
var bridgeStamp = regexp.MustCompile(`"laraworker":\{"v":1,"laravel":"[^"]*","at":[0-9]+`)

// bridgeStampAs gives payload the bridge stamp of like: two jobs
// dispatched by one command straddle a second now and then, and a retry
// keeps each job's own.
func bridgeStampAs(payload, like string) string {
	stamp := bridgeStamp.FindString(like)
	if stamp == "" {
		return payload
	}
	return bridgeStamp.ReplaceAllLiteralString(payload, stamp)
}

// TestPHPFailureRetriedByLaraworker (b, reverse): a FailingJob PHP failed
// is pushed back by `laraworker retry <uuid>` with the payload
// `queue:retry` writes (checked against a second failure retried by
// artisan) and runs again in PHP on attempt 1.
func TestPHPFailureRetriedByLaraworker(t *testing.T) { onEachDB(t, testPHPFailureRetriedByLaraworker) }

func testPHPFailureRetriedByLaraworker(t *testing.T, s *suite) {
	s.artisan(t, "app:dispatch", "throws", "--count=2")
	s.phpWork(t, "--stop-when-empty")
	failed := s.failed(t)
	if len(failed) != 2 {
		t.Fatalf("%d failed jobs, want 2", len(failed))
	}
	byGo, byPHP := failed[0], failed[1]

	s.laraworker(t, "retry", byGo.UUID)
	s.artisan(t, "queue:retry", byPHP.UUID)

	if n := len(s.failed(t)); n != 0 {
		t.Fatalf("%d failed jobs left after both retries", n)
	}
	rows := s.jobs(t)
	if len(rows) != 2 || rows[0].UUID != byGo.UUID || rows[1].UUID != byPHP.UUID {
		t.Fatalf("jobs after the retries: %+v", rows)
	}
	goRow, phpRow := rows[0], rows[1]
	for _, pair := range [][2]string{{byGo.Payload, goRow.Payload}, {byPHP.Payload, phpRow.Payload}} {
		if was, is := bridgeStamp.FindString(pair[0]), bridgeStamp.FindString(pair[1]); was != is {
			t.Errorf("a retry changed the bridge record's stamp: %q in failed_jobs, %q pushed back", was, is)
		}
	}
	got := bridgeStampAs(strings.ReplaceAll(goRow.Payload, byGo.UUID, byPHP.UUID), phpRow.Payload)
	if got != phpRow.Payload {
		t.Errorf("payload pushed back by laraworker retry differs from queue:retry's (modulo uuid and the bridge's dispatch second):\n go  %s\n php %s", got, phpRow.Payload)
	}
	if !strings.Contains(phpRow.Payload, `caf\u00e9`) {
		t.Errorf("queue:retry did not re-encode non-ASCII as \\uXXXX, so the comparison proves less: %s", phpRow.Payload)
	}
	for _, j := range rows {
		if j.Attempts != 0 || j.ReservedAt.Valid || j.Queue != "default" || j.AvailableAt > s.now() {
			t.Errorf("retried row %+v: want attempts 0, not reserved, queue default, available now", j)
		}
	}

	s.phpWork(t, "--stop-when-empty")
	byUUID := runsByUUID(s.runs(t))
	for _, f := range failed {
		rs := byUUID[f.UUID]
		if len(rs) != 2 || rs[1].Worker != "php" || rs[1].Attempt != 1 || rs[1].Result["note"] != "café ✗" {
			t.Errorf("job %s runs %+v: want a second PHP run on attempt 1 seeing note café ✗", f.UUID, rs)
		}
	}
	if n := len(s.failed(t)); n != 2 {
		t.Errorf("%d failed jobs after the rerun, want both failed again", n)
	}
}
