package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
)

// Horizon cannot be installed here (Composer's registry is out of reach):
// these tests do what Horizon's commands do, as
// internal/horizon/testdata/horizon-commands.php states them from Horizon's
// source, against the records the real Go worker writes.

// horizonCommand runs horizon-commands.php (the test app has no
// config/horizon.php: Horizon's prefix is "horizon:") and returns the
// pids it signalled.
func (a *redisApp) horizonCommand(t *testing.T, args ...string) []string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "internal", "horizon", "testdata", "horizon-commands.php")
	out, err := exec.Command("php", append([]string{script, a.srv.Addr, "horizon:"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("horizon-commands.php %v: %v\n%s", args, err, out)
	}
	var pids []any
	if err := json.Unmarshal(out, &pids); err != nil {
		t.Fatalf("horizon-commands.php printed %s", out)
	}
	var s []string
	for _, p := range pids {
		s = append(s, strings.Trim(string(mustJSON(t, p)), `"`))
	}
	return s
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// supervisorOf waits for the supervisor record holding pid and returns
// its name.
func (a *redisApp) supervisorOf(t *testing.T, pid int) string {
	t.Helper()
	ctx := a.s.ctx(t)
	var name string
	waitFor(t, 15*time.Second, "the worker's supervisor record", func() bool {
		for _, n := range a.rc.ZRange(ctx, "horizon:supervisors", 0, -1).Val() {
			if a.rc.HGet(ctx, "horizon:supervisor:"+n, "pid").Val() == strconv.Itoa(pid) {
				name = n
				return true
			}
		}
		return false
	})
	return name
}

// status is a supervisor's status as its record says it.
func (a *redisApp) status(t *testing.T, supervisor string) string {
	return a.rc.HGet(a.s.ctx(t), "horizon:supervisor:"+supervisor, "status").Val()
}

// TestHorizonControlsReachGo: a Go worker on a Horizon app's queue is
// listed in Horizon's masters and supervisors, and what Horizon's
// commands do reaches it: horizon:pause (SIGUSR2 to the pids of this
// host's masters) stops its claims and its record says paused,
// horizon:continue resumes it, horizon:pause-supervisor and
// horizon:continue-supervisor (by the supervisor's name) likewise, as do
// Pause and ContinueWorking pushed on its command list; horizon:terminate
// (SIGTERM, and the restart stamp) stops it with status 0 and removes its
// records, while a Go worker not listed (--horizon-register=false, as on
// another host) stops on the restart stamp alone.
func TestHorizonControlsReachGo(t *testing.T) { onEachDB(t, testHorizonControlsReachGo) }

func testHorizonControlsReachGo(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	listed := s.start(t, a.goCmd(t, noopJob, nil, "--horizon", "on"))
	pid := listed.cmd.Process.Pid
	sup := a.supervisorOf(t, pid)
	if !strings.HasSuffix(sup, ":laraworker-default") {
		t.Fatalf("supervisor %q, want <master>:laraworker-default", sup)
	}
	a.checkPausedAndResumed(t, sup, []string{"pause"}, []string{"continue"}, pid)
	a.checkPausedAndResumed(t, sup, []string{"pause-supervisor", "laraworker-default"}, []string{"continue-supervisor", "laraworker-default"}, pid)
	a.checkPausedAndResumed(t, sup, []string{"push", sup, `Laravel\Horizon\SupervisorCommands\Pause`},
		[]string{"push", sup, `Laravel\Horizon\SupervisorCommands\ContinueWorking`}, 0)

	// Terminate, with a second worker that horizon:terminate's signal
	// cannot reach: it runs a job first, so it has read the restart stamp.
	a.horizonCommand(t, "push", sup, `Laravel\Horizon\SupervisorCommands\Pause`)
	waitFor(t, 10*time.Second, "the listed worker paused", func() bool { return a.status(t, sup) == "paused" })
	unlisted := s.start(t, a.goCmd(t, noopJob, nil, "--horizon", "on", "--horizon-register=false", "--name", "elsewhere"))
	a.artisan(t, "app:dispatch", "noop")
	waitFor(t, 15*time.Second, "the unlisted worker running a job", func() bool { return len(a.list(t, a.cfg.Queue)) == 0 })
	if pids := a.horizonCommand(t, "terminate"); !slices.Equal(pids, []string{strconv.Itoa(pid)}) {
		t.Fatalf("horizon:terminate signalled %v, want only the listed worker %d", pids, pid)
	}
	a.artisan(t, "queue:restart") // TerminateCommand's Cache::forever('illuminate:queue:restart', now)
	listed.wait(t, 30*time.Second)
	unlisted.wait(t, 30*time.Second)
	ctx := s.ctx(t)
	if n := a.rc.Exists(ctx, "horizon:supervisor:"+sup).Val(); n != 0 || len(a.rc.ZRange(ctx, "horizon:masters", 0, -1).Val()) != 0 {
		t.Errorf("after terminate: supervisor record exists %d, masters %v", n, a.rc.ZRange(ctx, "horizon:masters", 0, -1).Val())
	}
}

// checkPausedAndResumed runs pause, checks the record says paused and a
// job dispatched then is not claimed, runs resume and waits for the job
// to run. pid is the process pause must signal (0: none, a command list).
func (a *redisApp) checkPausedAndResumed(t *testing.T, sup string, pause, resume []string, pid int) {
	t.Helper()
	started := time.Now()
	if pids := a.horizonCommand(t, pause...); pid != 0 && !slices.Equal(pids, []string{strconv.Itoa(pid)}) {
		t.Fatalf("%s signalled %v, want the worker %d (Str::slug(gethostname()) is its master's start)", pause[0], pids, pid)
	}
	waitFor(t, 10*time.Second, pause[0]+": the record paused", func() bool { return a.status(t, sup) == "paused" })
	t.Logf("%s %s: the record said paused %s after the command started", pause[0], strings.Join(pause[1:], " "), time.Since(started).Round(time.Millisecond))
	a.artisan(t, "app:dispatch", "noop")
	// The worker polls every 0.2 s: 2 s of polls leave the job alone.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if len(a.list(t, a.cfg.Queue)) != 1 {
			t.Fatalf("%s: a job was claimed while paused", pause[0])
		}
		time.Sleep(100 * time.Millisecond)
	}
	started = time.Now()
	a.horizonCommand(t, resume...)
	waitFor(t, 15*time.Second, resume[0]+": the job run", func() bool { return len(a.list(t, a.cfg.Queue)) == 0 })
	claimed := time.Since(started)
	waitFor(t, 10*time.Second, resume[0]+": the record running", func() bool { return a.status(t, sup) == "running" })
	t.Logf("%s: the waiting job claimed %s after the command started, the record running after %s", resume[0], claimed.Round(time.Millisecond), time.Since(started).Round(time.Millisecond))
}

// installHorizonStandIn marks laravel/horizon installed in the suite's
// app (a class of its name; the test's content) with a
// config/horizon.php, until the test ends.
func installHorizonStandIn(t *testing.T, s *suite, config string) {
	t.Helper()
	autoload := filepath.Join(s.app, "bootstrap", "autoload.php")
	orig, err := os.ReadFile(autoload)
	if err != nil {
		t.Fatal(err)
	}
	stub := filepath.Join(s.app, "horizon-installed.php")
	conf := filepath.Join(s.app, "config", "horizon.php")
	t.Cleanup(func() {
		_ = os.WriteFile(autoload, orig, 0o644)
		_ = os.Remove(stub)
		_ = os.Remove(conf)
	})
	for file, content := range map[string]string{
		stub:     "<?php\nnamespace Laravel\\Horizon;\nclass Horizon {}\n",
		conf:     config,
		autoload: string(orig) + "\nrequire_once dirname(__DIR__).'/horizon-installed.php';\n",
	} {
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// supervisorsConfig has the suite's environment (local) matched first by
// "loc*", before "local" itself: Horizon takes the first match.
const supervisorsConfig = `<?php
return [
    'defaults' => ['supervisor-1' => ['connection' => 'redis', 'queue' => ['default'], 'balance' => 'auto',
        'maxProcesses' => 1, 'memory' => 128, 'tries' => 1, 'timeout' => 60]],
    'environments' => [
        'production' => ['supervisor-1' => ['maxProcesses' => 10]],
        'loc*' => ['supervisor-1' => ['maxProcesses' => 3, 'tries' => 3, 'queue' => ['emails', 'default'], 'backoff' => [0], 'balance' => 'off']],
        'local' => ['supervisor-1' => ['maxProcesses' => 5, 'tries' => 9]],
    ],
];
`

// TestHorizonSupervisorSettings: `work --horizon-supervisor supervisor-1`
// runs as Horizon would start that supervisor's workers in the app's
// environment (the first key of horizon.environments matching it, over
// horizon.defaults): its queues (a job on "emails" is run), its tries (a
// failing job runs 3 times, then lands in failed_jobs), its processes as
// the worker's concurrency, all in its Horizon record; Terminate on its
// command list stops it with the status asked; a supervisor the plan
// lacks stops the worker at start with the names it has.
func TestHorizonSupervisorSettings(t *testing.T) { onEachDB(t, testHorizonSupervisorSettings) }

func testHorizonSupervisorSettings(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	installHorizonStandIn(t, s, supervisorsConfig)
	a.artisan(t, "app:dispatch", "noop", "--queue=emails")
	p, err := payload.Parse([]byte(a.list(t, "emails")[0]))
	if err != nil {
		t.Fatal(err)
	}
	w := s.start(t, a.goCmd(t, noopJob, []string{"-fail", "failing as asked"}, "--horizon-supervisor", "supervisor-1"))
	sup := a.supervisorOf(t, w.cmd.Process.Pid)
	if !strings.HasSuffix(sup, ":supervisor-1") {
		t.Errorf("supervisor %q, want <master>:supervisor-1", sup)
	}
	// The suite's app runs in "local": its master is marked, so that the
	// dashboard lists no planned supervisor under it as inactive.
	master := a.rc.HGet(s.ctx(t), "horizon:supervisor:"+sup, "master").Val()
	if env := a.rc.HGet(s.ctx(t), "horizon:master:"+master, "environment").Val(); env != "local (laraworker)" {
		t.Errorf("the master's environment %q, want \"local (laraworker)\"", env)
	}
	var opts map[string]any
	if err := json.Unmarshal([]byte(a.rc.HGet(s.ctx(t), "horizon:supervisor:"+sup, "options").Val()), &opts); err != nil {
		t.Fatal(err)
	}
	if opts["queue"] != "emails,default" || opts["maxProcesses"] != 3.0 || opts["maxTries"] != 3.0 || opts["balance"] != "off" {
		t.Errorf("the record's options %v: want the supervisor's queues, 3 processes, 3 tries, run as balance off", opts)
	}
	waitFor(t, 30*time.Second, "the job failed after its tries", func() bool { return len(s.failed(t)) == 1 })
	if runs := runsByUUID(s.runs(t))[p.UUID]; len(runs) != 3 {
		t.Errorf("%d runs of the failing job, want the supervisor's 3 tries", len(runs))
	}
	// The master's restart (SIGUSR1) pushes Terminate with status 1 to
	// each supervisor's list: the worker stops and exits with it.
	a.horizonCommand(t, "push", sup, `Laravel\Horizon\SupervisorCommands\Terminate`, `{"status":1}`)
	select {
	case <-w.done:
		if code := w.cmd.ProcessState.ExitCode(); code != 1 {
			t.Errorf("after Terminate with status 1: exit status %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30 s after Terminate: %s", w.killForStderr())
	}

	cmd := a.goCmd(t, noopJob, nil, "--horizon-supervisor", "supervisor-9")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 2 || !strings.Contains(string(out), `has no supervisor "supervisor-9"; it has supervisor-1`) {
		t.Errorf("an unknown supervisor: exit %d, %s", code, tail(string(out)))
	}
}
