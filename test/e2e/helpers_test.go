package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/payload"
)

// cmdTimeout bounds every foreground command.
const cmdTimeout = 2 * time.Minute

// env is the environment of every php and laraworker process: clean, plus
// the .env laraworker (and the recorder) read.
func (s *suite) env(extra ...string) []string {
	return append(append(cleanEnviron(), "LARAWORKER_ENV="+s.envFile), extra...)
}

// artisan runs `php artisan args...` in the app and returns its output;
// a non-zero exit fails the test.
func (s *suite) artisan(t *testing.T, args ...string) string {
	t.Helper()
	return s.run(t, s.phpCmd(args...))
}

// phpWork is `php artisan queue:work args...` with --sleep=0: an empty
// poll then ends --once and --stop-when-empty runs at once instead of after
// the default 3 s sleep.
func (s *suite) phpWork(t *testing.T, args ...string) string {
	t.Helper()
	return s.artisan(t, append([]string{"queue:work", "--sleep=0"}, args...)...)
}

func (s *suite) phpCmd(args ...string) *exec.Cmd {
	cmd := exec.Command("php", append([]string{"artisan"}, args...)...)
	cmd.Dir = s.app
	cmd.Env = s.env()
	return cmd
}

// laraworker runs the built binary (LARAWORKER_ENV points it at the app's
// .env) and returns its stdout; a non-zero exit fails the test.
func (s *suite) laraworker(t *testing.T, args ...string) string {
	t.Helper()
	return s.run(t, s.lwCmd(args...))
}

func (s *suite) lwCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(s.laraw, args...)
	cmd.Dir = s.app
	cmd.Env = s.env()
	return cmd
}

// work is `laraworker work` as the tests run it: --stop-when-empty-style
// runs poll quickly so they do not sit out the default 3 s sleep.
func (s *suite) work(t *testing.T, args ...string) string {
	t.Helper()
	return s.laraworker(t, append([]string{"work", "--sleep", "0.2"}, args...)...)
}

// route is a --route flag sending class to the recorder with its flags.
func (s *suite) route(class string, recorderArgs ...string) string {
	spec := s.recorder + " -env '" + s.envFile + "'"
	for _, a := range recorderArgs {
		spec += " '" + a + "'"
	}
	return "--route=" + class + "=exec:" + spec
}

// run runs cmd with a timeout and returns stdout; stderr is shown on
// failure.
func (s *suite) run(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := startGroup(cmd); err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	started := time.Now()
	defer func() {
		if d := time.Since(started); d > time.Second {
			t.Logf("%s took %s", shortArgs(cmd), d.Round(time.Millisecond))
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(cmd.Args, " "), err, stdout.String(), tail(stderr.String()))
		}
	case <-time.After(cmdTimeout):
		killGroup(cmd)
		<-done
		t.Fatalf("%s: still running after %s\nstderr:\n%s", strings.Join(cmd.Args, " "), cmdTimeout, tail(stderr.String()))
	}
	return stdout.String()
}

// shortArgs names a command without the temp dir paths.
func shortArgs(cmd *exec.Cmd) string {
	args := make([]string, len(cmd.Args))
	for i, a := range cmd.Args {
		if strings.HasPrefix(a, "/") || strings.Contains(a, "exec:/") {
			a = a[strings.LastIndex(a, "/")+1:]
		}
		args[i] = a
	}
	return strings.Join(args, " ")
}

func tail(s string) string {
	const n = 6000
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// startGroup starts cmd in its own process group, so killing it also
// kills what it started (the recorder, PHP's children).
func startGroup(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// background is a started process the test waits for; t.Cleanup kills it
// if the test ends first.
type background struct {
	cmd    *exec.Cmd
	stderr lockedBuffer
	done   chan error
}

// lockedBuffer is a process's stderr that a test may read while the
// process still writes it (a log line to wait for).
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

func (s *suite) start(t *testing.T, cmd *exec.Cmd) *background {
	t.Helper()
	b := &background{cmd: cmd, done: make(chan error, 1)}
	cmd.Stderr = &b.stderr
	if err := startGroup(cmd); err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	go func() { b.done <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			killGroup(cmd)
		}
	})
	return b
}

// wait waits for the process to exit within d and fails the test if it
// exits with an error or does not stop in time.
func (b *background) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case err := <-b.done:
		b.done <- err // keep it readable for Cleanup
		if err != nil {
			t.Fatalf("%s: %v\nstderr:\n%s", strings.Join(b.cmd.Args, " "), err, tail(b.stderr.String()))
		}
	case <-time.After(d):
		t.Fatalf("%s: still running after %s\nstderr:\n%s", strings.Join(b.cmd.Args, " "), d, b.killForStderr())
	}
}

// killForStderr kills the process and returns its stderr's tail once
// exec has stopped copying into the buffer (reading it earlier races
// with the copy).
func (b *background) killForStderr() string {
	killGroup(b.cmd)
	select {
	case err := <-b.done:
		b.done <- err
		return tail(b.stderr.String())
	case <-time.After(30 * time.Second):
		return "(stderr unreadable: the process group did not exit after SIGKILL)"
	}
}

// running reports whether the process has not exited yet.
func (b *background) running() bool {
	select {
	case err := <-b.done:
		b.done <- err
		return false
	default:
		return true
	}
}

// --- database ---

func (s *suite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func (s *suite) exec(t *testing.T, query string, args ...any) int64 {
	t.Helper()
	res, err := s.q.DB().ExecContext(s.ctx(t), s.q.Dialect().Rebind(query), args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	n, _ := res.RowsAffected()
	return n
}

// reset empties every table the tests look at.
func (s *suite) reset(t *testing.T) {
	t.Helper()
	for _, table := range []string{"jobs", "failed_jobs", "job_batches", "job_runs", "cache"} {
		s.exec(t, "delete from "+table)
	}
}

// jobRow is a jobs row with the payload keys the tests look at.
type jobRow struct {
	testdb.JobRow
	UUID  string
	Class string // displayName
}

func (s *suite) jobs(t *testing.T) []jobRow {
	t.Helper()
	var out []jobRow
	for _, r := range testdb.JobRows(t, s.q) {
		p, err := payload.Parse([]byte(r.Payload))
		if err != nil {
			t.Fatalf("jobs row %d: %v", r.ID, err)
		}
		out = append(out, jobRow{JobRow: r, UUID: p.UUID, Class: p.DisplayName})
	}
	return out
}

// hookJobClasses are the bridge's hook jobs, which a Go worker pushes onto
// the hooks queue ("default") with its failures and batch updates: the
// bridge is installed in the test app.
var hookJobClasses = map[string]bool{`Laraworker\Bridge\Jobs\RunFailureHooks`: true, `Laraworker\Bridge\Jobs\RunBatchCallbacks`: true}

// queuedJobs are the jobs rows but the bridge's hook jobs; hookJobs are
// those.
func (s *suite) queuedJobs(t *testing.T) []jobRow {
	t.Helper()
	var out []jobRow
	for _, j := range s.jobs(t) {
		if !hookJobClasses[j.Class] {
			out = append(out, j)
		}
	}
	return out
}

func (s *suite) hookJobs(t *testing.T) []jobRow {
	t.Helper()
	var out []jobRow
	for _, j := range s.jobs(t) {
		if hookJobClasses[j.Class] {
			out = append(out, j)
		}
	}
	return out
}

// runRow is a job_runs row: one handled job, by PHP or by the recorder.
type runRow struct {
	ID      int64
	UUID    string // "" for batch and chain callbacks
	Class   string
	Attempt int64
	Worker  string
	Result  map[string]any
	Raw     string // result as stored
}

func (s *suite) runs(t *testing.T) []runRow {
	t.Helper()
	rows, err := s.q.DB().QueryContext(s.ctx(t), "select id, uuid, class, attempt, worker, result from job_runs order by id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []runRow
	for rows.Next() {
		var r runRow
		var uuid, result sql.NullString
		if err := rows.Scan(&r.ID, &uuid, &r.Class, &r.Attempt, &r.Worker, &result); err != nil {
			t.Fatal(err)
		}
		r.UUID, r.Raw = uuid.String, result.String
		if result.Valid {
			dec := json.NewDecoder(strings.NewReader(result.String))
			dec.UseNumber()
			if err := dec.Decode(&r.Result); err != nil {
				t.Fatalf("job_runs %d result %q: %v", r.ID, result.String, err)
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// runsOf groups job runs by job uuid.
func runsByUUID(runs []runRow) map[string][]runRow {
	m := map[string][]runRow{}
	for _, r := range runs {
		if r.UUID != "" {
			m[r.UUID] = append(m[r.UUID], r)
		}
	}
	return m
}

type failedRow = testdb.FailedRow

func (s *suite) failed(t *testing.T) []failedRow { return testdb.FailedRows(t, s.q) }

func failedByUUID(rows []failedRow) map[string]failedRow {
	m := map[string]failedRow{}
	for _, f := range rows {
		m[f.UUID] = f
	}
	return m
}

// batchRow is the part of job_batches Laravel's Batch object exposes.
type batchRow struct {
	ID, Name                string
	Total, Pending, Failed  int64
	FailedJobIDs            string
	CancelledAt, FinishedAt sql.NullInt64
}

func (s *suite) batch(t *testing.T, id string) (batchRow, error) {
	t.Helper()
	var b batchRow
	err := s.q.DB().QueryRowContext(s.ctx(t), s.q.Dialect().Rebind(
		"select id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, cancelled_at, finished_at from job_batches where id = ?"), id).
		Scan(&b.ID, &b.Name, &b.Total, &b.Pending, &b.Failed, &b.FailedJobIDs, &b.CancelledAt, &b.FinishedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return b, errNoRows
	}
	return b, err
}

// dispatchedBatch returns the id `app:dispatch batch...` printed.
func dispatchedBatch(t *testing.T, out string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, ": batch ")
	if !ok {
		t.Fatalf("no batch id in %q", out)
	}
	return strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0])
}

func (s *suite) now() int64 { return time.Now().Unix() }

// makeAvailable is the test's stand-in for waiting out delays and backoffs.
func (s *suite) makeAvailable(t *testing.T) {
	t.Helper()
	s.exec(t, "update jobs set available_at = ? where reserved_at is null", s.now())
}

func num(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return i
}
