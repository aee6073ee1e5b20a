package e2e

import (
	"strings"
	"testing"
)

// released checks the one row left after a release: the same job (uuid,
// payload byte for byte) as a new row, not reserved, with the attempts
// so far, available backoff seconds after the release, which happened
// between from and to.
func released(t *testing.T, s *suite, before jobRow, attempts, backoff, from, to int64) jobRow {
	t.Helper()
	rows := s.jobs(t)
	if len(rows) != 1 {
		t.Fatalf("jobs after the release: %+v, want one", rows)
	}
	r := rows[0]
	if r.UUID != before.UUID || r.Payload != before.Payload || r.Queue != before.Queue {
		t.Errorf("released row is another job or changed payload:\n got  %+v\n want %+v", r, before)
	}
	if r.ID == before.ID {
		t.Errorf("released row kept id %d; Laravel deletes and inserts (a new id)", r.ID)
	}
	if r.Attempts != attempts || r.ReservedAt.Valid {
		t.Errorf("released row: attempts %d reserved_at %v, want %d and null", r.Attempts, r.ReservedAt, attempts)
	}
	if r.AvailableAt < from+backoff || r.AvailableAt > to+backoff {
		t.Errorf("released row available at %d, want now+%d in [%d, %d]", r.AvailableAt, backoff, from+backoff, to+backoff)
	}
	return r
}

// TestGoReleasesPHPRetries (f): a job that throws in Go with tries 3 and
// backoff 30 is released on attempt 1, available 30 s later; once it is
// available, PHP runs it on attempt 2.
func TestGoReleasesPHPRetries(t *testing.T) { onEachDB(t, testGoReleasesPHPRetries) }

func testGoReleasesPHPRetries(t *testing.T, s *suite) {
	s.artisan(t, "app:dispatch", "scalars")
	job := s.jobs(t)[0]

	from := s.now()
	s.work(t, "--once", "--tries", "3", "--backoff", "30", s.route(`App\Jobs\ScalarsJob`, "-fail", "try again later"))
	to := s.now()
	released(t, s, job, 1, 30, from, to)

	s.phpWork(t, "--once", "--tries=3")
	if rows := s.jobs(t); len(rows) != 1 {
		t.Fatalf("PHP ran a job that is not available yet: jobs %+v", rows)
	}
	s.makeAvailable(t)
	s.phpWork(t, "--once", "--tries=3")

	runs := s.runs(t)
	if len(runs) != 2 || runs[0].Worker != "go" || runs[0].Attempt != 1 || runs[1].Worker != "php" || runs[1].Attempt != 2 || runs[1].UUID != job.UUID {
		t.Errorf("runs %+v; want go on attempt 1, then php on attempt 2", runs)
	}
	if rows, failed := s.jobs(t), s.failed(t); len(rows) != 0 || len(failed) != 0 {
		t.Errorf("left %d jobs and %d failed jobs, want none", len(rows), len(failed))
	}
}

// TestAttemptsPingPong (f, reverse): a FailingJob with tries 3 and
// backoff 20 goes PHP (attempt 1, released) → Go (attempt 2, released) →
// PHP (attempt 3, the last: failed), each side counting the other's
// attempts.
func TestAttemptsPingPong(t *testing.T) { onEachDB(t, testAttemptsPingPong) }

func testAttemptsPingPong(t *testing.T, s *suite) {
	s.artisan(t, "app:dispatch", "throws")
	job := s.jobs(t)[0]
	phpArgs := []string{"--once", "--tries=3", "--backoff=20"}

	from := s.now()
	s.phpWork(t, phpArgs...)
	job = released(t, s, job, 1, 20, from, s.now())
	s.makeAvailable(t)
	job.AvailableAt = s.now()

	from = s.now()
	s.work(t, "--once", "--tries", "3", "--backoff", "20", s.route(`App\Jobs\FailingJob`, "-fail", "Go failed too"))
	released(t, s, job, 2, 20, from, s.now())
	s.makeAvailable(t)

	s.phpWork(t, phpArgs...)
	if rows := s.jobs(t); len(rows) != 0 {
		t.Fatalf("jobs left after the 3rd attempt: %+v", rows)
	}
	failed := s.failed(t)
	if len(failed) != 1 || failed[0].UUID != job.UUID || !strings.HasPrefix(failed[0].Exception, "RuntimeException: Podcast 42 could not be processed") {
		t.Errorf("failed_jobs %+v; want the job, failed by PHP's exception", failed)
	}
	runs := s.runs(t)
	want := []string{"php", "go", "php"}
	if len(runs) != 3 {
		t.Fatalf("runs %+v, want 3", runs)
	}
	for i, r := range runs {
		if r.Worker != want[i] || r.Attempt != int64(i+1) {
			t.Errorf("run %d: %s on attempt %d, want %s on attempt %d", i+1, r.Worker, r.Attempt, want[i], i+1)
		}
	}
}

// TestMaxExceptionsCountedAcrossSides: Laravel counts a job's exceptions in
// the cache (job-exceptions:<uuid>), so every worker sees them. A
// MaxExceptionsJob (maxExceptions 2, tries 10, backoff 0) that threw once
// in PHP and then throws in Go has reached maxExceptions: Laravel fails
// it, and so does laraworker, which counts in the app's database cache
// store under the same key.
func TestMaxExceptionsCountedAcrossSides(t *testing.T) {
	onEachDB(t, testMaxExceptionsCountedAcrossSides)
}

func testMaxExceptionsCountedAcrossSides(t *testing.T, s *suite) {
	s.artisan(t, "app:dispatch", "max-exceptions")
	s.phpWork(t, "--once")
	if rows := s.jobs(t); len(rows) != 1 || rows[0].Attempts != 1 {
		t.Fatalf("after PHP's first exception, jobs are %+v; want the job released on attempt 1", rows)
	}
	s.work(t, "--once", s.route(`App\Jobs\MaxExceptionsJob`, "-fail", "second exception in Go"))
	if rows, failed := s.queuedJobs(t), s.failed(t); len(rows) != 0 || len(failed) != 1 {
		t.Errorf("after the 2nd exception (in Go): %d jobs (attempts %v), %d failed; Laravel fails the job (maxExceptions 2)",
			len(rows), attemptsOf(rows), len(failed))
	}
}

func attemptsOf(rows []jobRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.Attempts
	}
	return out
}
