package reliability

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// appDB is the MariaDB database of the copied Laravel app;
// LARAWORKER_TEST_DB_SUFFIX lets two checkouts run the suite at once.
var appDB = "laraworker_rel" + os.Getenv("LARAWORKER_TEST_DB_SUFFIX")

// app is the copied Laravel app on laraworker_rel, set up on first use.
var app struct {
	once    sync.Once
	err     error
	dir     string // temp dir holding the copy
	path    string // the app (artisan's directory)
	envFile string
	hasPHP  bool
	q       *database.Queue
}

// needApp returns the app with jobs, failed_jobs and job_runs emptied.
// Without PHP it creates the same tables from Go so the Go-only variants
// can run.
func needApp(t *testing.T) {
	t.Helper()
	// The app's .env names this server; without it setUpApp would wait on
	// the driver's timeouts.
	testdsn.Need(t, "MariaDB (the reliability app's database)", "tcp", "127.0.0.1:3306")
	needBins(t)
	app.once.Do(func() { app.err = setUpApp() })
	if app.err != nil {
		if os.Getenv("LARAWORKER_TEST_REQUIRE_DB") == "" && strings.Contains(app.err.Error(), "connect") {
			t.Skipf("no MariaDB: %v", app.err)
		}
		t.Fatal(app.err)
	}
	for _, table := range []string{"jobs", "failed_jobs", "job_runs"} {
		if _, err := app.q.DB().Exec("delete from " + table); err != nil {
			t.Fatal(err)
		}
	}
}

func needPHP(t *testing.T) {
	t.Helper()
	if !app.hasPHP {
		t.Skip("php is not installed: the PHP part of this test is skipped")
	}
}

func setUpApp() error {
	dir, err := os.MkdirTemp("", "laraworker-rel-app-")
	if err != nil {
		return err
	}
	app.dir = dir
	app.path = filepath.Join(dir, "laravel")
	app.envFile = filepath.Join(app.path, ".env")
	_, lookErr := exec.LookPath("php")
	app.hasPHP = lookErr == nil
	if app.hasPHP {
		if err := copyTree("../../testdata/laravel", app.path); err != nil {
			return err
		}
		if err := copyTree("../../testdata/setup-php.sh", filepath.Join(dir, "setup-php.sh")); err != nil {
			return err
		}
		os.Remove(app.envFile)
		cmd := exec.Command(filepath.Join(dir, "setup-php.sh"))
		cmd.Env = append(cleanEnv(), "DB_CONNECTION=mysql", "DB_HOST=127.0.0.1", "DB_PORT=3306",
			"DB_DATABASE="+appDB, "DB_USERNAME=root", "DB_PASSWORD=")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("setup-php.sh: %w\n%s", err, out)
		}
	} else if err := goOnlyApp(); err != nil {
		return err
	}
	cfg, _, err := appconfig.Load(context.Background(), appconfig.Options{EnvOnly: true, EnvFile: app.envFile, Environ: []string{}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	app.q, err = database.Open(ctx, cfg, database.Options{})
	return err
}

// goOnlyApp writes a .env and creates Laravel's tables and job_runs
// without PHP.
func goOnlyApp() error {
	if err := os.MkdirAll(app.path, 0o755); err != nil {
		return err
	}
	key := "base64:" + strings.Repeat("QUJD", 10) + "QUJDRA=="
	env := "APP_KEY=" + key + "\nDB_CONNECTION=mysql\nDB_HOST=127.0.0.1\nDB_PORT=3306\nDB_DATABASE=" + appDB + "\nDB_USERNAME=root\nDB_PASSWORD=\n"
	if err := os.WriteFile(app.envFile, []byte(env), 0o600); err != nil {
		return err
	}
	root, err := sql.Open("mysql", "root@tcp(127.0.0.1:3306)/")
	if err != nil {
		return err
	}
	defer root.Close()
	if _, err := root.Exec("create database if not exists " + appDB); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	cfg, _, err := appconfig.Load(context.Background(), appconfig.Options{EnvOnly: true, EnvFile: app.envFile, Environ: []string{}})
	if err != nil {
		return err
	}
	q, err := database.Open(context.Background(), cfg, database.Options{})
	if err != nil {
		return err
	}
	defer q.Close()
	if err := q.CreateTables(context.Background()); err != nil {
		return err
	}
	_, err = q.DB().Exec(`create table if not exists job_runs (id bigint unsigned auto_increment primary key,
		uuid varchar(255) null, class varchar(255) not null, attempt int unsigned not null,
		worker varchar(255) not null, result text null, created_at timestamp null, index (uuid))`)
	return err
}

func copyTree(from, to string) error {
	return exec.Command("cp", "-r", from, to).Run()
}

// cleanEnv is the process environment without anything that would point
// a child at another database or app.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "DB_") || strings.HasPrefix(k, "APP_") || strings.HasPrefix(k, "LARAWORKER_") ||
			strings.HasPrefix(k, "QUEUE_") || k == "DATABASE_URL" || k == "WORKER_NAME" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// --- processes ---

// proc is a started worker process. Its stdout and stderr are kept.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  syncBuffer
	done chan struct{}
	err  error
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startProc(t *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Dir = app.path
	if p.cmd.Dir == "" {
		p.cmd.Dir = os.TempDir()
	}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill(); <-p.done })
	return p
}

// goWorker starts relworker's `work` on the app's .env.
func goWorker(t *testing.T, extraEnv []string, args ...string) *proc {
	t.Helper()
	env := append(cleanEnv(), "LARAWORKER_ENV="+app.envFile)
	return startProc(t, "relworker", append(env, extraEnv...), bins.relworker, append([]string{"work"}, args...)...)
}

// phpWorker starts `php artisan queue:work` in the app.
func phpWorker(t *testing.T, retryAfter int, args ...string) *proc {
	t.Helper()
	env := append(cleanEnv(), "WORKER_NAME=php", "QUEUE_RETRY_AFTER="+strconv.Itoa(retryAfter))
	return startProc(t, "php", env, "php", append([]string{"artisan", "queue:work"}, args...)...)
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) kill() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }

func (p *proc) signal(s syscall.Signal) { _ = p.cmd.Process.Signal(s) }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to exit and returns its error.
func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		p.kill()
		<-p.done
		t.Fatalf("%s did not exit within %s; output:\n%s", p.name, d, tail(p.out.String()))
		return nil
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop(t *testing.T, d time.Duration) {
	t.Helper()
	p.signal(syscall.SIGTERM)
	if err := p.wait(t, d); err != nil {
		t.Errorf("%s exited with %v; output:\n%s", p.name, err, tail(p.out.String()))
	}
}

// rssKB is a process's resident set size (VmRSS).
func rssKB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	t.Fatalf("no VmRSS for %d", pid)
	return 0
}

func tail(s string) string {
	if len(s) > 6000 {
		return "..." + s[len(s)-6000:]
	}
	return s
}

// --- rows ---

// template returns a NoopJob payload for queue as PHP dispatched it
// (without PHP: as payload.BuildObjectPayload builds it).
func noopTemplate(t *testing.T, queue string) []byte {
	t.Helper()
	if !app.hasPHP {
		raw, err := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\NoopJob`), payload.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	artisan(t, "app:dispatch", "noop", "--count=1", "--queue="+queue)
	var raw []byte
	if err := app.q.DB().QueryRow("select payload from jobs where queue = ? order by id desc limit 1", queue).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if _, err := app.q.DB().Exec("delete from jobs where queue = ?", queue); err != nil {
		t.Fatal(err)
	}
	return raw
}

// pushCopies pushes n copies of a payload, each with a fresh uuid, and
// returns the uuids.
func pushCopies(t *testing.T, q *database.Queue, template []byte, queue string, n int) map[string]bool {
	t.Helper()
	p, err := payload.Parse(template)
	if err != nil {
		t.Fatal(err)
	}
	uuids := make(map[string]bool, n)
	items := make([]jobqueue.PushItem, 0, n)
	for range n {
		id, _ := payload.NewUUID()
		uuids[id] = true
		items = append(items, jobqueue.PushItem{Queue: queue, Payload: bytes.Replace(template, []byte(p.UUID), []byte(id), 1)})
	}
	if err := q.PushMany(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	return uuids
}

func artisan(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("php", append([]string{"artisan"}, args...)...)
	cmd.Dir = app.path
	cmd.Env = append(cleanEnv(), "WORKER_NAME=php")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("php artisan %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func count(t *testing.T, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// run is a job_runs row.
type run struct {
	ID      int64
	UUID    string
	Class   string
	Attempt int64
	Worker  string
	Result  string
}

func runs(t *testing.T) []run {
	t.Helper()
	rows, err := app.q.DB().Query("select id, coalesce(uuid, ''), class, attempt, worker, coalesce(result, '') from job_runs order by id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []run
	for rows.Next() {
		var r run
		if err := rows.Scan(&r.ID, &r.UUID, &r.Class, &r.Attempt, &r.Worker, &r.Result); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// runsOf is the job_runs rows of one class.
func runsOf(t *testing.T, class string) []run {
	t.Helper()
	var out []run
	for _, r := range runs(t) {
		if r.Class == class {
			out = append(out, r)
		}
	}
	return out
}

// failed is a failed_jobs row.
type failed struct {
	UUID, Queue, Payload, Exception string
}

func failedRows(t *testing.T, db *sql.DB, table string) []failed {
	t.Helper()
	rows, err := db.Query("select uuid, queue, payload, exception from " + table + " order by id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []failed
	for rows.Next() {
		var f failed
		if err := rows.Scan(&f.UUID, &f.Queue, &f.Payload, &f.Exception); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, d, what, cond)
}

// waitUntil polls cond until it holds (true) or d passes (false).
func waitUntil(d time.Duration, cond func() bool) bool { return testwait.Poll(d, cond) }
