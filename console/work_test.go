package console

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/console/internal/testapp"
	"github.com/laraworker/laraworker/internal/testutil/gobuild"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// laraworkerBinary builds the CLI once per test run, for tests that need
// a real process (signals, exit codes).
func laraworkerBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "laraworker-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "laraworker")
		binErr = gobuild.Program(context.Background(), "..", ".", binPath, "")
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestWorkRunsRoutedJobsWithExec(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	script := filepath.Join(dir, "handler.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ncat > "+dir+"/ran.$LARAWORKER_JOB_UUID\n"), 0o755)
	testapp.PushJob(t, q, `App\Jobs\A`, phpserialize.Public("n", phpserialize.Int(1)))
	testapp.PushJob(t, q, `App\Jobs\A`, phpserialize.Public("n", phpserialize.Int(2)))
	testapp.PushJob(t, q, `App\Jobs\B`)
	cmd := exec.Command(laraworkerBinary(t), "work", "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--sleep", "0.05",
		"--route", `App\Jobs\A=exec:`+script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("work: %v\n%s", err, out)
	}
	ran, _ := filepath.Glob(filepath.Join(dir, "ran.*"))
	if len(ran) != 2 {
		t.Fatalf("the exec handler ran %d times, want 2\nworker log:\n%s", len(ran), out)
	}
	for _, f := range ran {
		doc, _ := os.ReadFile(f)
		if !strings.HasPrefix(string(doc), `{"version":2,"uuid":"`+strings.TrimPrefix(filepath.Ext(f), ".")+`"`) || !strings.Contains(string(doc), `"displayName":"App\\Jobs\\A","payload":{`) {
			t.Errorf("stdin of the exec handler: %s", doc)
		}
	}
	if testapp.CountRows(t, q, "jobs") != 1 {
		t.Fatal("the unrouted job must stay")
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("log lines must be JSON when not on a terminal: %q", line)
		}
	}
	if strings.Contains(string(out), "hunter2-secret") || strings.Contains(string(out), strings.TrimPrefix(testapp.FixtureKey, "base64:")) {
		t.Fatal("a secret reached the log")
	}
}

func TestWorkStopsGracefullyOnSIGTERMAndPausesOnSIGUSR2(t *testing.T) {
	t.Parallel() // waits on real time and child processes: beside the other waiting tests
	dir, q := testapp.SqliteApp(t)
	script := filepath.Join(dir, "slow.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\nsleep 1\n"), 0o755)
	for i := 0; i < 3; i++ {
		testapp.PushJob(t, q, `App\Jobs\Slow`)
	}
	cmd := exec.Command(laraworkerBinary(t), "work", "--env", filepath.Join(dir, ".env"), "--sleep", "0.05", "--concurrency", "1",
		"--grace", "5s", "--route", `App\Jobs\Slow=exec:`+script)
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	reserved := func() int { return testapp.CountRows(t, q, "jobs where reserved_at is not null") }
	jobsLeft := func(n int) func() bool { return func() bool { return testapp.CountRows(t, q, "jobs") == n } }
	// The signals are caught before the first claim, so a reserved job
	// means SIGUSR2 pauses rather than kills.
	waitFor(t, 10*time.Second, "the first job to be reserved", func() bool { return reserved() == 1 })
	cmd.Process.Signal(syscall.SIGUSR2) // pause: the running job finishes, no new claim
	waitFor(t, 10*time.Second, "the pause to be logged", func() bool { return strings.Contains(logs.String(), "paused: no new jobs are claimed") })
	waitFor(t, 10*time.Second, "the running job to finish", jobsLeft(2))
	holdsFor(t, 500*time.Millisecond, "no claim while paused (10 --sleep rounds)", func() bool { return reserved() == 0 && testapp.CountRows(t, q, "jobs") == 2 })
	cmd.Process.Signal(syscall.SIGCONT)
	waitFor(t, 10*time.Second, "the next job to start after SIGCONT", func() bool { return reserved() == 1 })
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, logs.String())
	}
	if time.Since(start) > 4*time.Second {
		t.Fatal("SIGTERM must let the running job finish, then exit")
	}
	if n := testapp.CountRows(t, q, "jobs"); n != 1 {
		t.Fatalf("after SIGTERM: %d jobs left, want 1 (the running job finished, the last never claimed)", n)
	}
	if reserved() != 0 {
		t.Fatal("no job may stay reserved after a graceful stop")
	}
}

func TestWorkExitCodes(t *testing.T) {
	dir, _ := testapp.SqliteApp(t)
	bin := laraworkerBinary(t)
	cmd := exec.Command(bin, "work", "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--memory", "1", "--route", `App\Jobs\A=noop`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 12 {
		t.Fatalf("--memory exceeded must exit 12 as artisan does, got %v", err)
	}
	if strings.Contains(stderr.String(), "laraworker: \n") || !strings.Contains(stderr.String(), "RSS reached --memory 1 MB") {
		t.Fatalf("a memory stop must say why, without a bare error line:\n%s", stderr.String())
	}
	out, err := exec.Command(bin, "work", "--env", filepath.Join(dir, ".env")).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "no handlers") {
		t.Fatalf("no handlers: %v %s", err, out)
	}
}

func TestMetricsAndHealth(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	for i := 0; i < 3; i++ {
		testapp.PushJob(t, q, `App\Jobs\A`)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(laraworkerBinary(t), "work", "--env", filepath.Join(dir, ".env"), "--sleep", "0.05",
		"--metrics-addr", addr, "--route", `App\Jobs\A=noop`)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	go io.Copy(io.Discard, bufio.NewReader(stderr))
	done := `laraworker_jobs_total{class="App\\Jobs\\A",outcome="done",queue="default"} 3`
	var body string
	waitFor(t, 10*time.Second, "/metrics to count the 3 jobs", func() bool {
		_, body = httpGet("http://" + addr + "/metrics")
		return strings.Contains(body, done)
	})
	// Counters with labels known at start are there before their first
	// event, at 0 (an alert on them has a series to read).
	for _, want := range []string{"laraworker_job_duration_seconds_bucket", "laraworker_claim_seconds_count", "laraworker_queue_depth",
		`laraworker_config_errors_total{kind="app_key"} 0`, `laraworker_config_errors_total{kind="schema"} 0`,
		`laraworker_jobs_total{class="App\\Jobs\\A",outcome="failed",queue="default"} 0`,
		`laraworker_lost_reservations_total{op="delete"} 0`, `laraworker_outcomes_dropped_total{op="fail"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if status, body := httpGet("http://" + addr + "/healthz"); status != http.StatusOK {
		t.Fatalf("/healthz: %d %q", status, body)
	}
}

// With the wrong APP_KEY, /healthz turns unhealthy and says why, the
// encrypted job stays in the table for PHP, and nothing is failed.
func TestHealthzReportsAKeyProblem(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	other, err := payload.NewEncrypter([]byte("another app's key, 32 bytes long"), payload.DefaultCipher)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\Secret`), payload.BuildOptions{Encrypter: other})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Push(context.Background(), jobqueue.PushItem{Payload: raw}); err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(laraworkerBinary(t), "work", "--env", filepath.Join(dir, ".env"), "--sleep", "0.05",
		"--metrics-addr", addr, "--route", `App\Jobs\Secret=noop`)
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	var status int
	var body string
	waitFor(t, 10*time.Second, "/healthz to turn unhealthy", func() bool {
		status, body = httpGet("http://" + addr + "/healthz")
		return status == http.StatusServiceUnavailable
	})
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "app_key") || !strings.Contains(body, `App\Jobs\Secret`) {
		t.Fatalf("/healthz: %d %q, want 503 naming the key problem", status, body)
	}
	if strings.Contains(body, "bGFyYXdvcmtlc") || strings.Contains(logs.String(), "bGFyYXdvcmtlc") {
		t.Fatal("the APP_KEY reached /healthz or the log")
	}
	if n := testapp.CountRows(t, q, "failed_jobs"); n != 0 {
		t.Fatalf("%d failed jobs: a key problem must not fail jobs", n)
	}
	// The health turns as the claim is found undecryptable; the job's
	// give-back is written right after.
	var attempts int
	var reserved sql.NullInt64
	waitFor(t, 10*time.Second, "the job to be given back untouched", func() bool {
		err := q.DB().QueryRow("select attempts, reserved_at from jobs").Scan(&attempts, &reserved)
		return err == nil && attempts == 0 && !reserved.Valid
	})
	if n := testapp.CountRows(t, q, "failed_jobs"); n != 0 {
		t.Fatalf("%d failed jobs after the give-back", n)
	}
}

// --log-level picks what is logged: debug shows each job's start, warn
// hides the per-job lines; the log names its units.
func TestWorkLogLevels(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	bin := laraworkerBinary(t)
	run := func(level string) (string, error) {
		testapp.PushJob(t, q, `App\Jobs\A`)
		cmd := exec.Command(bin, "work", "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--sleep", "0.05",
			"--log-level", level, "--route", `App\Jobs\A=noop`)
		var logs bytes.Buffer
		cmd.Stderr = &logs
		err := cmd.Run()
		return logs.String(), err
	}
	debug, err := run("debug")
	if err != nil || !strings.Contains(debug, `"message":"job started"`) || !strings.Contains(debug, `"duration_ms":`) {
		t.Fatalf("--log-level debug: %v\n%s", err, debug)
	}
	if !strings.Contains(debug, `"done":1`) || !strings.Contains(debug, `"message":"worker stopped"`) {
		t.Fatalf("the final line must summarise outcomes:\n%s", debug)
	}
	warn, err := run("warn")
	if err != nil || strings.Contains(warn, `"message":"job"`) || strings.Contains(warn, "worker started") {
		t.Fatalf("--log-level warn still logs info lines: %v\n%s", err, warn)
	}
	if _, err := run("loud"); err == nil {
		t.Fatal("--log-level loud accepted")
	}
}

// TestWorkTunesTheCollectorUnlessGOGCIsSet: `work` sizes Go's collector
// (internal/gctune) unless GOGC is set in its environment.
func TestWorkTunesTheCollectorUnlessGOGCIsSet(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	bin := laraworkerBinary(t)
	for _, tc := range []struct {
		gogc, want string
	}{{"", `"tuned":true`}, {"100", `"tuned":false`}} {
		testapp.PushJob(t, q, `App\Jobs\A`)
		cmd := exec.Command(bin, "work", "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--sleep", "0.05",
			"--log-level", "debug", "--route", `App\Jobs\A=noop`)
		cmd.Env = append(withoutEnv(os.Environ(), "GOGC"), "GOGC="+tc.gogc)
		var logs bytes.Buffer
		cmd.Stderr = &logs
		if err := cmd.Run(); err != nil {
			t.Fatalf("GOGC=%q: %v\n%s", tc.gogc, err, logs.String())
		}
		if !strings.Contains(logs.String(), tc.want) {
			t.Fatalf("GOGC=%q: no %s in the log:\n%s", tc.gogc, tc.want, logs.String())
		}
	}
}

// withoutEnv drops name from an environment list.
func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// lockedBuffer is a bytes.Buffer a running process writes to while the
// test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
