package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// movableClass is the class TestMoveClassToGo moves from PHP to Go.
const movableClass = `App\Jobs\MovableJob`

// movableKinds dispatch MovableJob in every form the bridge routes: plain,
// Queue::push, two links of a chain, two members of a batch; plus one
// delayed by a second. 7 MovableJob runs in all.
func (s *suite) dispatchMovable(t *testing.T) {
	t.Helper()
	for _, kind := range []string{"movable", "movable-push", "movable-chain", "movable-batch"} {
		s.artisan(t, "app:dispatch", kind)
	}
	s.artisan(t, "app:dispatch", "movable", "--delay=1")
	s.artisan(t, "app:dispatch", "noop")
}

const movableRunsPerDispatch = 7

// TestMoveClassToGo is the story on the real Laravel 8.83 app with
// a `php artisan queue:work` running all along: before the switch PHP runs
// every MovableJob; then the bridge config is installed, `laraworker move`
// moves the backlog (delayed jobs PHP had not run) and Go starts on its
// queue: from then on every MovableJob (plain, Queue::push, chain links,
// batch members, delayed, moved) runs in Go, none in PHP, none lost, none
// failed, while the other classes (the chain's middle link, the batch's
// other member, NoopJob) stay on PHP.
func TestMoveClassToGo(t *testing.T) { onEachDB(t, testMoveClassToGo) }

func testMoveClassToGo(t *testing.T, s *suite) {
	if s.driver == "sqlite" {
		t.Skip("PHP workers on SQLite stop at the first \"database is locked\"; run with mysql or pgsql")
	}
	php := s.start(t, s.phpCmd("queue:work", "--queue=default", "--sleep=1"))

	// Before the switch: PHP runs everything.
	s.dispatchMovable(t)
	s.waitUntil(t, "PHP drains the queue", func() bool { return len(s.jobs(t)) == 0 })
	before := s.runs(t)
	if n := countRuns(before, movableClass, "php"); n != movableRunsPerDispatch || countRuns(before, movableClass, "go") != 0 {
		t.Fatalf("before the switch PHP ran %d MovableJobs, want %d: %+v", n, movableRunsPerDispatch, before)
	}

	// The backlog at the switch: jobs PHP has not run yet (delayed an
	// hour), of the class and of another.
	s.artisan(t, "app:dispatch", "movable", "--delay=3600", "--count=5")
	s.artisan(t, "app:dispatch", "noop", "--delay=3600")

	// The switch: install the bridge config, move the backlog.
	config := filepath.Join(s.app, "config", "laraworker.php")
	routes := "<?php\n\nreturn [\n    'queue' => 'go',\n    'connection' => null,\n    'jobs' => [\n        App\\Jobs\\MovableJob::class,\n    ],\n];\n"
	if err := os.WriteFile(config, []byte(routes), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(config) })
	var moved struct {
		Classes []struct {
			Moved                int64 `json:"moved"`
			FromUnreservedBefore int64 `json:"from_unreserved_before"`
			FromUnreservedAfter  int64 `json:"from_unreserved_after"`
			ToAfter              int64 `json:"to_after"`
		} `json:"classes"`
	}
	out := s.laraworker(t, "move", movableClass, "--from", "default", "--to", "go", "--json")
	if err := json.Unmarshal([]byte(out), &moved); err != nil {
		t.Fatalf("move --json: %v\n%s", err, out)
	}
	if c := moved.Classes; len(c) != 1 || c[0].Moved != 5 || c[0].FromUnreservedBefore != 5 || c[0].FromUnreservedAfter != 0 || c[0].ToAfter != 5 {
		t.Fatalf("move: %s", out)
	}

	// After the switch: new dispatches go to Go's queue by themselves.
	s.dispatchMovable(t)
	// The moved delayed jobs are due (the test's stand-in for an hour).
	s.exec(t, "update jobs set available_at = ? where queue = ? and reserved_at is null", s.now(), "go")
	goWorker := s.start(t, s.lwCmd("work", "--queue", "go", "--sleep", "0.2", s.route(movableClass)))

	wantGo := 5 + movableRunsPerDispatch
	s.waitUntil(t, "Go and PHP run everything but the delayed NoopJob", func() bool {
		left := s.jobs(t)
		return len(left) == 1 && left[0].Class == `App\Jobs\NoopJob` && countRuns(s.runs(t), movableClass, "go") >= wantGo
	})
	stop(t, goWorker)
	stop(t, php)

	after := s.runs(t)[len(before):]
	if n := countRuns(after, movableClass, "go"); n != wantGo {
		t.Errorf("after the switch Go ran %d MovableJobs, want %d", n, wantGo)
	}
	if n := countRuns(after, movableClass, "php"); n != 0 {
		t.Errorf("after the switch PHP ran %d MovableJobs, want none", n)
	}
	labels := map[string]int{}
	seen := map[string]bool{}
	for _, r := range after {
		if seen[r.UUID] {
			t.Errorf("job %s ran twice", r.UUID)
		}
		seen[r.UUID] = true
		if r.Class == movableClass {
			labels[r.Result["label"].(string)]++ // Go watches only queue go
		} else if r.Worker != "php" {
			t.Errorf("%s ran in %s, want php: %+v", r.Class, r.Worker, r)
		}
	}
	for label, n := range map[string]int{"plain": 7, "pushed": 1, "link 1": 1, "link 3": 1, "member 1": 1, "member 3": 1} {
		if labels[label] != n {
			t.Errorf("Go ran %d MovableJobs labelled %q, want %d (all: %v)", labels[label], label, n, labels)
		}
	}
	for class, n := range map[string]int{`App\Jobs\ChainLinkJob`: 1, `App\Jobs\BatchMemberJob`: 1, `App\Jobs\NoopJob`: 1} {
		if got := countRuns(after, class, "php"); got != n {
			t.Errorf("PHP ran %s %d times after the switch, want %d", class, got, n)
		}
	}
	if f := s.failed(t); len(f) != 0 {
		t.Errorf("%d jobs failed, first: %.300s", len(f), f[0].Exception)
	}
	var batches int64
	if err := s.q.DB().QueryRowContext(s.ctx(t), "select count(*) from job_batches where pending_jobs <> 0 or finished_at is null").Scan(&batches); err != nil || batches != 0 {
		t.Errorf("%d unfinished batches (%v)", batches, err)
	}
}

func countRuns(runs []runRow, class, worker string) int {
	n := 0
	for _, r := range runs {
		if r.Class == class && r.Worker == worker {
			n++
		}
	}
	return n
}

// waitUntil polls cond for up to two minutes.
func (s *suite) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s; jobs left: %+v", what, s.jobs(t))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop ends a long-running worker with SIGTERM, as a deploy would.
func stop(t *testing.T, b *background) {
	t.Helper()
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(time.Minute):
		killGroup(b.cmd)
		t.Fatalf("%s did not stop on SIGTERM\n%s", strings.Join(b.cmd.Args, " "), tail(b.stderr.String()))
	}
}
