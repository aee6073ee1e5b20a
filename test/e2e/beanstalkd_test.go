package e2e

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/beanstalkproto"
	"github.com/laraworker/laraworker/internal/testutil/testbeanstalkd"
	"github.com/laraworker/laraworker/laravel/payload"
)

// beanstalkdApp is the test app on its beanstalkd queue connection
// (Laravel 8.83's BeanstalkdQueue over Debian's pheanstalk 4), served by a
// private beanstalkd; bs is a connection of the test's own to look.
type beanstalkdApp struct {
	s   *suite
	srv *testbeanstalkd.Server
	bs  *beanstalkproto.Conn
	env []string
}

// beanstalkdQueue starts a beanstalkd for the test and points the app's
// beanstalkd connection at it.
func (s *suite) beanstalkdQueue(t *testing.T, extraEnv ...string) *beanstalkdApp {
	t.Helper()
	srv := testbeanstalkd.Start(t)
	bs, err := beanstalkproto.Dial(s.ctx(t), srv.Addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bs.Close() })
	env := []string{"QUEUE_CONNECTION=beanstalkd", "BEANSTALKD_QUEUE_HOST=127.0.0.1", fmt.Sprintf("BEANSTALKD_QUEUE_PORT=%d", srv.Port), hooksOnTheDatabase}
	return &beanstalkdApp{s: s, srv: srv, bs: bs, env: append(env, extraEnv...)}
}

// artisan runs `php artisan args...` on the beanstalkd connection.
func (a *beanstalkdApp) artisan(t *testing.T, args ...string) string {
	t.Helper()
	cmd := a.s.phpCmd(args...)
	cmd.Env = a.s.env(a.env...)
	return a.s.run(t, cmd)
}

// work is `php artisan queue:work beanstalkd --sleep=0 args...` (its
// default --tries=1 fails any second attempt).
func (a *beanstalkdApp) work(t *testing.T, args ...string) string {
	t.Helper()
	return a.artisan(t, append([]string{"queue:work", "beanstalkd", "--sleep=0"}, args...)...)
}

// goCmd is the Go worker on the app's beanstalkd connection, running the
// recorder for classes (recorderArgs make it misbehave).
func (a *beanstalkdApp) goCmd(t *testing.T, classes string, recorderArgs []string, args ...string) *exec.Cmd {
	t.Helper()
	flags := []string{"--connection", "beanstalkd", "--log-format", "json"}
	for _, class := range strings.Split(classes, ",") {
		flags = append(flags, a.s.route(class, recorderArgs...))
	}
	return a.s.classworkerCmd(t, a.env, append(flags, args...)...)
}

func (a *beanstalkdApp) goWork(t *testing.T, classes string, recorderArgs []string, args ...string) string {
	t.Helper()
	return a.s.run(t, a.goCmd(t, classes, recorderArgs, args...))
}

// tube is stats-tube of name (zero counts when it does not exist).
func (a *beanstalkdApp) tube(t *testing.T, name string) beanstalkproto.TubeStats {
	t.Helper()
	st, err := a.bs.StatsTube(name)
	if err != nil && !errors.Is(err, beanstalkproto.ErrNotFound) {
		t.Fatal(err)
	}
	return st
}

// head is the ready (or else delayed) job at the head of tube, with its
// stats.
func (a *beanstalkdApp) head(t *testing.T, tube string) (beanstalkproto.Job, beanstalkproto.JobStats) {
	t.Helper()
	if err := a.bs.Use(tube); err != nil {
		t.Fatal(err)
	}
	j, err := a.bs.PeekReady()
	if errors.Is(err, beanstalkproto.ErrNotFound) {
		j, err = a.bs.PeekDelayed()
	}
	if err != nil {
		t.Fatalf("no job on tube %s: %v", tube, err)
	}
	st, err := a.bs.StatsJob(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	return j, st
}

// waitReady waits until the job is ready (a delay ran out).
func (a *beanstalkdApp) waitReady(t *testing.T, id uint64) {
	t.Helper()
	waitFor(t, 30*time.Second, "the job to be ready", func() bool {
		st, err := a.bs.StatsJob(id)
		return err == nil && st.State == "ready"
	})
}

// empty checks that no job is left on tube.
func (a *beanstalkdApp) empty(t *testing.T, tube string) {
	t.Helper()
	if st := a.tube(t, tube); st.Ready+st.Delayed+st.Reserved+st.Buried != 0 {
		t.Errorf("left on tube %s: %+v", tube, st)
	}
}

// TestBeanstalkdPHPAndGoDrainOneQueue: `php artisan queue:work
// beanstalkd` and the Go worker drain one tube side by side: every job
// runs once, as its first attempt, both take some, and nothing is left.
func TestBeanstalkdPHPAndGoDrainOneQueue(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { beanstalkdPHPAndGoDrainOneQueue(t, s.beanstalkdQueue(t), 600) })
}

func beanstalkdPHPAndGoDrainOneQueue(t *testing.T, a *beanstalkdApp, n int) {
	s := a.s
	a.artisan(t, "app:dispatch", "noop", "--count="+strconv.Itoa(n))
	if st := a.tube(t, "default"); st.Ready != int64(n) {
		t.Fatalf("%d jobs dispatched: %+v", n, st)
	}
	goCmd := a.goCmd(t, noopJob, nil, "--stop-when-empty", "--sleep", "100ms")
	php := exec.Command("php", "artisan", "queue:work", "beanstalkd", "--sleep=0", "--stop-when-empty")
	php.Dir, php.Env = s.app, s.env(a.env...)
	// Both start at once: Go's start (reading the app's config through its
	// PHP) takes about as long as PHP's first jobs.
	phpRun := s.start(t, php)
	goRun := s.start(t, goCmd)
	phpRun.wait(t, time.Minute)
	goRun.wait(t, time.Minute)
	runs := s.runs(t)
	byWorker := map[string]int{}
	for uuid, rs := range runsByUUID(runs) {
		if len(rs) != 1 || rs[0].Attempt != 1 {
			t.Errorf("job %s ran %d times: %+v", uuid, len(rs), rs)
		}
		byWorker[rs[0].Worker]++
	}
	if len(runs) != n {
		t.Fatalf("%d runs of %d jobs", len(runs), n)
	}
	t.Logf("runs by worker: %v", byWorker)
	if byWorker["go"] == 0 || byWorker["php"] == 0 {
		t.Errorf("both workers should have run jobs: %v\nGo's log:\n%s", byWorker, tail(goRun.stderr.String()))
	}
	a.empty(t, "default")
}

// TestBeanstalkdGoFailsPHPRetries: a job Go fails is in failed_jobs under
// the beanstalkd connection with its tube as the queue; `php artisan
// queue:failed` lists it, `php artisan queue:retry all` puts it back on
// the tube as a new job (no reserve counted), and PHP runs it as a first
// attempt again.
func TestBeanstalkdGoFailsPHPRetries(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { beanstalkdGoFailsPHPRetries(t, s.beanstalkdQueue(t)) })
}

func beanstalkdGoFailsPHPRetries(t *testing.T, a *beanstalkdApp) {
	s := a.s
	a.artisan(t, "app:dispatch", "noop")
	j, _ := a.head(t, "default")
	p, _ := payload.Parse(j.Body)
	a.goWork(t, noopJob, []string{"-fail", "failing as asked"}, "--stop-when-empty")
	failed := s.failed(t)
	if len(failed) != 1 || failed[0].UUID != p.UUID || failed[0].Connection != "beanstalkd" || failed[0].Queue != "default" ||
		failed[0].Payload != string(j.Body) || !strings.Contains(failed[0].Exception, "failing as asked") {
		t.Fatalf("failed rows %+v", failed)
	}
	a.empty(t, "default")
	if listed := a.artisan(t, "queue:failed"); !strings.Contains(listed, p.UUID) || !strings.Contains(listed, "beanstalkd") {
		t.Fatalf("queue:failed does not list the job:\n%s", listed)
	}
	a.artisan(t, "queue:retry", "all")
	retried, st := a.head(t, "default")
	if string(retried.Body) == "" || st.State != "ready" || st.Reserves != 0 || len(s.failed(t)) != 0 {
		t.Fatalf("after queue:retry: %+v, failed %d", st, len(s.failed(t)))
	}
	a.work(t, "--stop-when-empty")
	runs := runsByUUID(s.runs(t))[p.UUID]
	if len(runs) != 2 || runs[0].Worker != "go" || runs[1].Worker != "php" || runs[1].Attempt != 1 {
		t.Fatalf("runs %+v: want Go's failed attempt, then PHP's first attempt after the retry", runs)
	}
	a.empty(t, "default")
}

// TestBeanstalkdDelayedAndReleased: a delayed job waits until due, then
// Go runs it; a job Go releases is delayed at Laravel's priority with its
// attempt counted, and PHP runs it as attempt 2.
func TestBeanstalkdDelayedAndReleased(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { beanstalkdDelayedAndReleased(t, s.beanstalkdQueue(t)) })
}

func beanstalkdDelayedAndReleased(t *testing.T, a *beanstalkdApp) {
	s := a.s
	a.artisan(t, "app:dispatch", "delayed", "--delay=3", "--queue=high")
	_, st := a.head(t, "high")
	if st.State != "delayed" || st.TTR != 90 || st.Pri != beanstalkproto.DefaultPriority {
		t.Fatalf("the delayed job %+v", st)
	}
	a.goWork(t, `App\Jobs\DelayedJob`, nil, "--queue", "high", "--stop-when-empty")
	if _, now := a.head(t, "high"); now.State != "delayed" || len(s.runs(t)) != 0 {
		t.Fatalf("Go ran a delayed job before it was due: %+v, runs %+v", now, s.runs(t))
	}
	a.waitReady(t, st.ID)
	a.goWork(t, `App\Jobs\DelayedJob`, nil, "--queue", "high", "--stop-when-empty")
	if runs := s.runs(t); len(runs) != 1 || runs[0].Worker != "go" {
		t.Fatalf("runs %+v", runs)
	}

	s.reset(t)
	a.artisan(t, "app:dispatch", "noop")
	j, _ := a.head(t, "default")
	p, _ := payload.Parse(j.Body)
	a.goWork(t, noopJob, []string{"-release"}, "--max-jobs", "1", "--tries", "3", "--backoff", "2")
	_, st = a.head(t, "default")
	if st.ID != j.ID || st.State != "delayed" || st.Reserves != 1 || st.Releases != 1 || st.Pri != beanstalkproto.DefaultPriority || st.Delay != 2 {
		t.Fatalf("after Go's release: %+v", st)
	}
	a.waitReady(t, st.ID)
	a.work(t, "--stop-when-empty", "--tries=3")
	runs := runsByUUID(s.runs(t))[p.UUID]
	if len(runs) != 2 || runs[0].Worker != "go" || runs[1].Worker != "php" || runs[1].Attempt != 2 {
		t.Fatalf("runs %+v: want Go's attempt 1, then PHP's attempt 2", runs)
	}
	a.empty(t, "default")
}

// TestBeanstalkdStopGivesJobsBack: a Go worker stopped while it runs a
// job gives the job back at once with its attempts as before the claim
// (beanstalkd counts every reserve; Laravel would leave it reserved until
// retry_after and then count the attempt): `php artisan queue:work` with
// its default --tries=1 then runs it as attempt 1 instead of failing it.
func TestBeanstalkdStopGivesJobsBack(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { beanstalkdStopGivesJobsBack(t, s.beanstalkdQueue(t)) })
}

func beanstalkdStopGivesJobsBack(t *testing.T, a *beanstalkdApp) {
	s := a.s
	a.artisan(t, "app:dispatch", "noop")
	j, _ := a.head(t, "default")
	p, _ := payload.Parse(j.Body)
	goRun := s.start(t, a.goCmd(t, noopJob, []string{"-hold", "60s"}, "--grace", "500ms"))
	waitFor(t, 30*time.Second, "Go's reservation", func() bool { return a.tube(t, "default").Reserved == 1 })
	if err := goRun.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	goRun.wait(t, 30*time.Second)
	back, st := a.head(t, "default")
	if st.State != "ready" || st.Reserves != 0 || string(back.Body) != string(j.Body) || st.TTR != 90 {
		t.Fatalf("the job given back: %+v\nGo's log:\n%s", st, tail(goRun.stderr.String()))
	}
	a.work(t, "--stop-when-empty")
	var php []runRow
	for _, r := range runsByUUID(s.runs(t))[p.UUID] {
		if r.Worker == "php" {
			php = append(php, r)
		}
	}
	if len(php) != 1 || php[0].Attempt != 1 || len(s.failed(t)) != 0 {
		t.Fatalf("PHP's runs %+v, failed %+v", php, s.failed(t))
	}
	a.empty(t, "default")
}

// TestBeanstalkdCLI: `laraworker size` counts the tubes, `push` puts a
// job (priority 1024, time-to-run retry_after) PHP runs, `clear` is refused as artisan refuses it,
// and `retry` puts a failed job back on its tube.
func TestBeanstalkdCLI(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { beanstalkdCLI(t, s.beanstalkdQueue(t)) })
}

func beanstalkdCLI(t *testing.T, a *beanstalkdApp) {
	s := a.s
	lw := func(wantOK bool, args ...string) string {
		t.Helper()
		cmd := s.lwCmd(args...)
		cmd.Env = append(cmd.Env, a.env...)
		out, err := cmd.CombinedOutput()
		if (err == nil) != wantOK {
			t.Fatalf("laraworker %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	a.artisan(t, "app:dispatch", "noop", "--count=2")
	a.artisan(t, "app:dispatch", "delayed", "--delay=3600", "--queue=later")
	out := lw(true, "size", "--connection", "beanstalkd")
	if !strings.Contains(out, "default") || !strings.Contains(out, "later") {
		t.Fatalf("size:\n%s", out)
	}
	out = lw(false, "clear", "--connection", "beanstalkd", "--force")
	if !strings.Contains(out, "not supported on beanstalkd") || a.tube(t, "default").Ready != 2 {
		t.Fatalf("clear:\n%s", out)
	}
	lw(true, "push", "--connection", "beanstalkd", "--queue", "pushed", noopJob)
	pushed, st := a.head(t, "pushed")
	if st.Pri != beanstalkproto.DefaultPriority || st.TTR != 90 || !strings.Contains(string(pushed.Body), `"displayName":"App\\Jobs\\NoopJob"`) {
		t.Fatalf("pushed %+v %s", st, pushed.Body)
	}
	a.work(t, "--stop-when-empty", "--queue=default,pushed")
	if runs := s.runs(t); len(runs) != 3 {
		t.Fatalf("PHP ran %d jobs, want the 2 dispatched and the one pushed: %+v", len(runs), runs)
	}
	a.artisan(t, "app:dispatch", "throws")
	a.work(t, "--stop-when-empty")
	failed := s.failed(t)
	if len(failed) != 1 || failed[0].Connection != "beanstalkd" {
		t.Fatalf("failed %+v", failed)
	}
	lw(true, "retry", "--connection", "beanstalkd", "all")
	if _, st := a.head(t, "default"); st.Reserves != 0 || len(s.failed(t)) != 0 {
		t.Fatalf("after retry: %+v", st)
	}
}

// TestBeanstalkdChainAndBatchCrossPHPAndGo: a chain and a batch whose
// jobs alternate between a class Go runs (MovableJob) and one only PHP
// runs: Go runs its links and puts the next on the tube, PHP runs the
// next, and so on; Go never reserves PHP's job at the head of the tube
// (it waits behind it: beanstalkd shows nothing behind a head), and the
// batch counts every member once and finishes.
func TestBeanstalkdChainAndBatchCrossPHPAndGo(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { beanstalkdChainAndBatchCrossPHPAndGo(t, s.beanstalkdQueue(t)) })
}

func beanstalkdChainAndBatchCrossPHPAndGo(t *testing.T, a *beanstalkdApp) {
	s := a.s
	const movable = `App\Jobs\MovableJob`
	sides := func() string {
		var out []string
		for _, r := range s.runs(t) {
			out = append(out, r.Class[strings.LastIndex(r.Class, `\`)+1:]+"@"+r.Worker)
		}
		return strings.Join(out, " ")
	}
	alternate := func() {
		a.goWork(t, movable, nil, "--stop-when-empty")
		if _, st := a.head(t, "default"); st.Reserves != 0 {
			t.Fatalf("Go reserved PHP's job: %+v", st)
		}
		a.work(t, "--once")
		a.goWork(t, movable, nil, "--stop-when-empty")
	}
	a.artisan(t, "app:dispatch", "movable-chain")
	alternate()
	if got := sides(); got != "MovableJob@go ChainLinkJob@php MovableJob@go" {
		t.Fatalf("the chain ran as %q", got)
	}
	a.empty(t, "default")

	s.reset(t)
	id := dispatchedBatch(t, a.artisan(t, "app:dispatch", "movable-batch"))
	alternate()
	if got := sides(); got != "MovableJob@go BatchMemberJob@php MovableJob@go" {
		t.Fatalf("the batch ran as %q", got)
	}
	b, err := s.batch(t, id)
	if err != nil || b.Pending != 0 || b.Failed != 0 || !b.FinishedAt.Valid {
		t.Fatalf("batch %+v %v", b, err)
	}
	a.empty(t, "default")
}
