package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/redis/go-redis/v9"
)

// TestRedisMoveClassToGo is TestMoveClassToGo on Laravel's Redis queue:
// with `php artisan queue:work redis` running all along, PHP runs every
// MovableJob before the switch; then the bridge config routes the class to
// queue "go" (on the default connection, redis), `laraworker move` moves
// the backlog (delayed jobs PHP had not run) from queues:default to
// queues:go, and Go starts on "go": from then on every MovableJob (plain,
// Queue::push, chain links, batch members, delayed, moved) runs in Go, none
// in PHP, none lost, none failed, while the other classes stay on PHP. A
// bridge config whose hooks queue would be the redis connection stops the
// app at boot, naming the setting to change.
func TestRedisMoveClassToGo(t *testing.T) { onEachDB(t, testRedisMoveClassToGo) }

func testRedisMoveClassToGo(t *testing.T, s *suite) {
	if s.driver == "sqlite" {
		t.Skip("PHP workers on SQLite stop at the first \"database is locked\"; run with mysql or pgsql")
	}
	a := s.redisQueue(t)
	// This app sets its hooks queue in config/laraworker.php below, not in
	// the environment.
	a.env = slices.DeleteFunc(a.env, func(v string) bool { return v == hooksOnTheDatabase })
	ctx := s.ctx(t)
	php := s.start(t, a.phpCmd("queue:work", "redis", "--queue=default", "--sleep=1"))

	// Before the switch: PHP runs everything.
	a.dispatchMovable(t)
	waitFor(t, 2*time.Minute, "PHP to drain the queue", func() bool { return s.redisLeft(t, a) == "" })
	before := s.runs(t)
	if n := countRuns(before, movableClass, "php"); n != movableRunsPerDispatch || countRuns(before, movableClass, "go") != 0 {
		t.Fatalf("before the switch PHP ran %d MovableJobs, want %d: %+v", n, movableRunsPerDispatch, before)
	}

	// The backlog at the switch: jobs PHP has not run yet (delayed an
	// hour), of the class and of another.
	a.artisan(t, "app:dispatch", "movable", "--delay=3600", "--count=5")
	a.artisan(t, "app:dispatch", "noop", "--delay=3600")

	// The switch. The hooks queue defaults to laraworker's connection:
	// redis, which the bridge refuses, saying what to set.
	config := filepath.Join(s.app, "config", "laraworker.php")
	t.Cleanup(func() { os.Remove(config) })
	writeRoutes := func(hooks string) {
		routes := "<?php\n\nreturn [\n    'queue' => 'go',\n    'connection' => null,\n" + hooks +
			"    'jobs' => [\n        App\\Jobs\\MovableJob::class,\n    ],\n];\n"
		if err := os.WriteFile(config, []byte(routes), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeRoutes("")
	boot := a.phpCmd("app:dispatch", "list")
	out, err := boot.CombinedOutput()
	// Symfony's console wraps the message at its width.
	flat := strings.Join(strings.Fields(string(out)), "")
	if err == nil || !strings.Contains(flat, "usesthe[redis]driver") || !strings.Contains(flat, "sethooks_queue.connection(LARAWORKER_HOOKS_CONNECTION)") {
		t.Fatalf("a redis hooks queue: want the app to refuse to boot naming hooks_queue.connection; got %v:\n%s", err, out)
	}
	writeRoutes("    'hooks_queue' => ['connection' => 'database', 'queue' => 'hooks'],\n")
	var moved struct {
		Classes []struct {
			Moved                int64 `json:"moved"`
			FromUnreservedBefore int64 `json:"from_unreserved_before"`
			FromUnreservedAfter  int64 `json:"from_unreserved_after"`
			ToAfter              int64 `json:"to_after"`
		} `json:"classes"`
	}
	moveOut := a.lw(t, "move", movableClass, "--from", "default", "--to", "go", "--json")
	if err := json.Unmarshal([]byte(moveOut), &moved); err != nil {
		t.Fatalf("move --json: %v\n%s", err, moveOut)
	}
	if c := moved.Classes; len(c) != 1 || c[0].Moved != 5 || c[0].FromUnreservedBefore != 5 || c[0].FromUnreservedAfter != 0 || c[0].ToAfter != 5 {
		t.Fatalf("move: %s", moveOut)
	}
	if got := a.delayedClasses(t, "go"); got != strings.Repeat(movableClass+" ", 5) {
		t.Fatalf("queues:go:delayed after the move: %q", got)
	}
	if got := a.delayedClasses(t, "default"); got != noopJob+" " {
		t.Fatalf("queues:default:delayed after the move: %q", got)
	}

	// After the switch: new dispatches go to Go's queue by themselves.
	a.dispatchMovable(t)
	if got := strings.Count(strings.Join(a.list(t, "go"), "\n"), `"displayName":"App\\Jobs\\MovableJob"`); got != 5 {
		t.Fatalf("%d MovableJobs on queues:go after the dispatches, want 5 (plain, Queue::push, chain link 1, batch members 1 and 3)", got)
	}
	// The moved delayed jobs are due (the test's stand-in for an hour).
	delayed := a.cfg.Keys("go").Delayed
	members, err := a.rc.ZRange(ctx, delayed, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		a.rc.ZAddXX(ctx, delayed, redis.Z{Score: float64(time.Now().Unix()), Member: m})
	}
	goWorker := s.start(t, a.lwCmd("work", "--connection", "redis", "--queue", "go", "--sleep", "0.2", s.route(movableClass)))

	wantGo := 5 + movableRunsPerDispatch
	waitFor(t, 2*time.Minute, "Go and PHP to run everything but the delayed NoopJob", func() bool {
		return s.redisLeft(t, a) == a.cfg.Keys("default").Delayed && countRuns(s.runs(t), movableClass, "go") >= wantGo
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
			labels[r.Result["label"].(string)]++
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
	if err := s.q.DB().QueryRowContext(ctx, "select count(*) from job_batches where pending_jobs <> 0 or finished_at is null").Scan(&batches); err != nil || batches != 0 {
		t.Errorf("%d unfinished batches (%v)", batches, err)
	}
}

// dispatchMovable is suite.dispatchMovable on the redis connection.
func (a *redisApp) dispatchMovable(t *testing.T) {
	t.Helper()
	for _, kind := range []string{"movable", "movable-push", "movable-chain", "movable-batch"} {
		a.artisan(t, "app:dispatch", kind)
	}
	a.artisan(t, "app:dispatch", "movable", "--delay=1")
	a.artisan(t, "app:dispatch", "noop")
}

// phpCmd is `php artisan args...` on the redis connection, not started.
func (a *redisApp) phpCmd(args ...string) *exec.Cmd {
	cmd := a.s.phpCmd(args...)
	cmd.Env = a.s.env(a.env...)
	return cmd
}

// lwCmd is the laraworker binary on the redis connection, not started.
func (a *redisApp) lwCmd(args ...string) *exec.Cmd {
	cmd := a.s.lwCmd(args...)
	cmd.Env = a.s.env(a.env...)
	return cmd
}

// delayedClasses lists the display names in queue's delayed set, each
// followed by a space, in score order.
func (a *redisApp) delayedClasses(t *testing.T, queue string) string {
	t.Helper()
	members, err := a.rc.ZRange(a.s.ctx(t), a.cfg.Keys(queue).Delayed, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for _, m := range members {
		p, err := payload.Parse([]byte(m))
		if err != nil {
			t.Fatal(err)
		}
		out += p.DisplayName + " "
	}
	return out
}
