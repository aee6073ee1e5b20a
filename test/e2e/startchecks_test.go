package e2e

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/laravel/payload"
)

// runCode runs cmd to its end and returns stdout, stderr and the exit
// status (a start error is not a test failure here: it is what is tested).
func (s *suite) runCode(t *testing.T, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := startGroup(cmd); err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			return stdout.String(), stderr.String(), ee.ExitCode()
		case err != nil:
			t.Fatalf("%s: %v", shortArgs(cmd), err)
		}
		return stdout.String(), stderr.String(), 0
	case <-time.After(cmdTimeout):
		killGroup(cmd)
		<-done
		t.Fatalf("%s: still running after %s\nstderr:\n%s", shortArgs(cmd), cmdTimeout, tail(stderr.String()))
	}
	return "", "", -1
}

// workCode runs `laraworker work` with extra environment and returns its
// log (stderr) and exit status.
func (s *suite) workCode(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := s.lwCmd(append([]string{"work", "--sleep", "0.2"}, args...)...)
	cmd.Env = s.env(env...)
	_, stderr, code := s.runCode(t, cmd)
	return stderr, code
}

// artisanEnv is `php artisan args...` with extra environment.
func (s *suite) artisanEnv(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := s.phpCmd(args...)
	cmd.Env = s.env(env...)
	return s.run(t, cmd)
}

// assertJobsUntouched: every job is still queued as PHP dispatched it
// (not reserved, not attempted) and nothing failed.
func (s *suite) assertJobsUntouched(t *testing.T, n int) {
	t.Helper()
	jobs := s.jobs(t)
	for _, j := range jobs {
		if j.Attempts != 0 || j.ReservedAt.Valid {
			t.Errorf("job %d was touched: attempts %d, reserved_at %v", j.ID, j.Attempts, j.ReservedAt.Int64)
		}
	}
	if len(jobs) != n || len(s.failed(t)) != 0 {
		t.Errorf("%d jobs (want %d), %d failed", len(jobs), n, len(s.failed(t)))
	}
}

// TestWorkRefusesWhatItCannotRun: on the real app, everything `work`
// can know at start is checked before it claims anything, and a wrong
// setting stops it with exit 2 and the cause: a queue connection the app
// does not define (as `php artisan queue:work nosuch`), a --route to a
// class the app does not have (read through its PHP, with a "did you
// mean" from its job classes), an exec handler that does not exist, a
// database or Redis that does not answer. No job is touched.
func TestWorkRefusesWhatItCannotRun(t *testing.T) { onEachDB(t, testWorkRefusesWhatItCannotRun) }

func testWorkRefusesWhatItCannotRun(t *testing.T, s *suite) {
	s.artisan(t, "app:dispatch", "noop")
	unreachable := []string{"--db-port", "1"}
	if s.driver == "sqlite" {
		unreachable = []string{"--db-database", "/nonexistent/laraworker/db.sqlite"}
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"unknown connection", nil, []string{"--connection", "nosuch", s.route(`App\Jobs\NoopJob`)},
			[]string{"the [nosuch] queue connection has not been configured", "which has beanstalkd, database, redis, sqs, sync"}},
		{"no such class", nil, []string{s.route(`App\Jobs\NoopJb`)},
			[]string{`route App\Jobs\NoopJb: the app has no such class`, `did you mean App\Jobs\NoopJob?`}},
		{"short name", nil, []string{"--route", `NoopJob=noop`},
			[]string{`route NoopJob: the app has no such class`, `did you mean App\Jobs\NoopJob?`}},
		{"missing exec handler", nil, []string{"--route", `App\Jobs\NoopJob=exec:/no/such/handler`},
			[]string{`--route App\Jobs\NoopJob: exec handler /no/such/handler: no such file`}},
		{"database down", nil, append(unreachable, s.route(`App\Jobs\NoopJob`)), []string{"work: "}},
		{"redis queue, database down", nil, append(unreachable, "--connection", "redis", s.route(`App\Jobs\NoopJob`)), []string{"work: "}},
		{"redis down", []string{"REDIS_PORT=1"}, []string{"--connection", "redis", s.route(`App\Jobs\NoopJob`)}, []string{"work: ", "redis"}},
	} {
		out, code := s.workCode(t, c.env, append([]string{"--stop-when-empty"}, c.args...)...)
		if code != 2 || strings.Contains(out, "worker started") {
			t.Errorf("%s: exit %d, want 2 before the worker starts\n%s", c.name, code, tail(out))
			continue
		}
		for _, want := range c.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the output lacks %q\n%s", c.name, want, tail(out))
			}
		}
	}
	s.assertJobsUntouched(t, 1)
	s.work(t, "--stop-when-empty", s.route(`App\Jobs\NoopJob`))
	if runs := s.runs(t); len(runs) != 1 || runs[0].Worker != "go" {
		t.Errorf("runs %+v, want the job run by Go once the route is right", runs)
	}
}

// TestCLIRouteKeepsUniqueLocksAndModels: a class routed to Go by
// `work --route ...=exec:` is run as PHP runs it. With the bridge
// recording every job (its default), a ShouldBeUnique job's lock is
// released after Go ran it (the next dispatch is queued again) and a job
// whose model was deleted is deleted, not run, as PHP does
// (deleteWhenMissingModels). With the bridge recording only the classes
// it routes, `work` reads the classes through the app's PHP at start and
// refuses such a route, naming the fix, unless told to run it without
// what it cannot learn (--run-without-php-declarations).
func TestCLIRouteKeepsUniqueLocksAndModels(t *testing.T) {
	onEachDB(t, testCLIRouteKeepsUniqueLocksAndModels)
}

func testCLIRouteKeepsUniqueLocksAndModels(t *testing.T, s *suite) {
	s.exec(t, "delete from cache_locks")
	t.Cleanup(func() { s.exec(t, "delete from cache_locks") })
	routes := []string{s.route(`App\Jobs\UniqueJob`), s.route(`App\Jobs\DeletableModelJob`)}
	s.artisan(t, "app:dispatch", "unique")
	s.artisan(t, "app:dispatch", "unique-2")
	s.artisan(t, "app:dispatch", "deletable-model")
	s.exec(t, "delete from podcasts where id = 77")
	if locks := s.lockCount(t); locks != 2 || len(s.jobs(t)) != 3 {
		t.Fatalf("after dispatch: %d locks, %d jobs; want 2 and 3", locks, len(s.jobs(t)))
	}
	s.work(t, append([]string{"--stop-when-empty"}, routes...)...)
	if left, failed := s.jobs(t), s.failed(t); len(left) != 0 || len(failed) != 0 {
		t.Fatalf("after Go: jobs %+v, failed %+v", left, failed)
	}
	if locks := s.lockCount(t); locks != 0 {
		t.Errorf("%d unique locks left after Go ran the jobs: every later dispatch would be dropped", locks)
	}
	runs := map[string]int{}
	for _, r := range s.runs(t) {
		runs[r.Class]++
	}
	if runs[`App\Jobs\UniqueJob`] != 2 || runs[`App\Jobs\DeletableModelJob`] != 0 {
		t.Errorf("runs %v: want both UniqueJobs run, the job whose podcast is gone deleted without running", runs)
	}
	s.artisan(t, "app:dispatch", "unique")
	if n := len(s.jobs(t)); n != 1 {
		t.Errorf("the next dispatch: %d jobs, want 1 (the lock was released)", n)
	}
	s.reset(t)
	s.exec(t, "delete from cache_locks")

	// The bridge records only the classes it routes (none here).
	routed := []string{"LARAWORKER_RECORD=routed"}
	s.artisanEnv(t, routed, "app:dispatch", "unique")
	s.artisanEnv(t, routed, "app:dispatch", "deletable-model")
	for _, j := range s.jobs(t) {
		if p, err := payload.Parse([]byte(j.Payload)); err != nil || p.Has("laraworker") {
			t.Fatalf("job %s carries a bridge record with 'record' => 'routed' (%v)", j.Class, err)
		}
	}
	for class, want := range map[string]string{
		`App\Jobs\UniqueJob`:         "ShouldBeUnique: its lock would stay in the cache after Go ran the job",
		`App\Jobs\DeletableModelJob`: "$deleteWhenMissingModels: a job whose model was deleted would run instead of being deleted",
	} {
		out, code := s.workCode(t, routed, "--stop-when-empty", s.route(class))
		if code != 2 || !strings.Contains(out, "--route "+class+": its jobs carry no bridge record") || !strings.Contains(out, want) ||
			!strings.Contains(out, "--run-without-php-declarations '"+class+"'") || !strings.Contains(out, "'record' => 'all'") {
			t.Errorf("--route %s without a record: exit %d\n%s", class, code, tail(out))
		}
	}
	s.assertJobsUntouched(t, 2)
	// Consent: the class runs without what Go cannot learn (here its lock
	// stays until uniqueFor ends, as the refusal said).
	out, code := s.workCode(t, routed, "--stop-when-empty", s.route(`App\Jobs\UniqueJob`), "--run-without-php-declarations", `App\Jobs\UniqueJob`)
	if code != 0 || len(s.runs(t)) != 1 || s.lockCount(t) != 1 {
		t.Errorf("with consent: exit %d, runs %d, locks %d; want 0, 1, 1\n%s", code, len(s.runs(t)), s.lockCount(t), tail(out))
	}
}

// TestFirstWorkOnAConfiguredApp: the first `work` on an app set up as the
// README says (the bridge installed and routing a class, Laravel's
// tables made, laraworker's own tables not yet) serves the queue the
// bridge routes to without --queue, makes laraworker's own tables for the
// dashboard, runs the jobs, and prints no more than one warning.
func TestFirstWorkOnAConfiguredApp(t *testing.T) { onEachDB(t, testFirstWorkOnAConfiguredApp) }

func testFirstWorkOnAConfiguredApp(t *testing.T, s *suite) {
	s.dropFleetTables(t)
	s.installBridgeConfig(t, "        App\\Jobs\\NoopJob::class,\n")
	s.artisan(t, "app:dispatch", "noop", "--count=2")
	if jobs := s.jobs(t); len(jobs) != 2 || jobs[0].Queue != "go" {
		t.Fatalf("the bridge did not route the jobs to queue go: %+v", jobs)
	}
	out, code := s.workCode(t, nil, "--stop-when-empty", s.route(`App\Jobs\NoopJob`))
	if code != 0 || len(s.jobs(t)) != 0 || len(s.runs(t)) != 2 {
		t.Fatalf("exit %d, %d jobs left, %d runs; want 0, 0, 2\n%s", code, len(s.jobs(t)), len(s.runs(t)), tail(out))
	}
	if n := strings.Count(out, `"level":"warn"`); n > 1 {
		t.Errorf("%d warnings on the first run of a configured app, want at most 1:\n%s", n, out)
	}
	if !strings.Contains(out, `"queues":["go"]`) {
		t.Errorf("the worker did not say it serves queue go:\n%s", out)
	}
	workers, err := fleet.On(s.q.DB(), s.q.Dialect(), s.q.Config().TablePrefix).Workers(s.ctx(t))
	if err != nil || len(workers) != 1 || workers[0].Done != 2 {
		t.Errorf("laraworker's tables after the first run: %+v, %v; want the worker's row with 2 jobs done", workers, err)
	}
}
