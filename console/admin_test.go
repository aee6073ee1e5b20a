package console

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/dbqueue"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/payload"
	"github.com/urfave/cli/v2"
)

// target is one database engine with freshly named tables, reached by the
// CLI through flags and by the test through a dbqueue.Queue on the same
// configuration.
type target struct {
	engine string
	flags  []string
	cfg    appconfig.Config
	q      *dbqueue.Queue
	ctx    context.Context
}

var engines = []string{appconfig.EngineMySQL, appconfig.EnginePgSQL, appconfig.EngineSQLite}

// forEachEngine runs fn per engine. MariaDB and PostgreSQL are skipped when
// unreachable unless LARAWORKER_TEST_REQUIRE_DB is set.
func forEachEngine(t *testing.T, fn func(t *testing.T, tg *target)) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) { fn(t, newTarget(t, engine)) })
	}
}

func newTarget(t *testing.T, engine string) *target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	sfx := randomSuffix(t)
	dir := t.TempDir()
	// A .env of its own: nothing from a developer's ./.env, no app to boot;
	// not production, so clear and flush run without asking.
	if err := os.WriteFile(filepath.Join(dir, "no.env"), []byte("APP_ENV=testing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := []string{
		"--env", filepath.Join(dir, "no.env"), "--db", engine,
		"--table", "jobs_" + sfx, "--failed-table", "failed_jobs_" + sfx, "--batches-table", "job_batches_" + sfx,
	}
	switch engine {
	case appconfig.EngineMySQL:
		mc, err := mysql.ParseDSN(envOr("LARAWORKER_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test"))
		if err != nil {
			t.Fatal(err)
		}
		host, port, _ := net.SplitHostPort(mc.Addr)
		flags = append(flags, "--db-host", host, "--db-port", port, "--db-username", mc.User, "--db-database", mc.DBName)
		setPassword(t, mc.Passwd)
	case appconfig.EnginePgSQL:
		pc, err := pgx.ParseConfig(envOr("LARAWORKER_TEST_PG_DSN", "postgres://postgres@127.0.0.1:5432/test"))
		if err != nil {
			t.Fatal(err)
		}
		flags = append(flags, "--db-host", pc.Host, "--db-port", fmt.Sprint(pc.Port), "--db-username", pc.User, "--db-database", pc.Database)
		setPassword(t, pc.Password)
	default:
		flags = append(flags, "--db-database", filepath.Join(dir, "database.sqlite"))
	}
	tg := &target{engine: engine, flags: flags, ctx: ctx}
	// The tables come from the command under test.
	if _, stderr, code := tg.run(t, "tables"); code != 0 {
		if engine != appconfig.EngineSQLite && os.Getenv("LARAWORKER_TEST_REQUIRE_DB") == "" {
			t.Skipf("%s not reachable: %s", engine, stderr)
		}
		t.Fatalf("tables: exit %d: %s", code, stderr)
	}
	tg.cfg = tg.config(t)
	q, err := dbqueue.Open(ctx, tg.cfg, dbqueue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := q.DropTables(context.Background()); err != nil {
			t.Errorf("dropping tables: %v", err)
		}
		q.Close()
	})
	tg.q = q
	return tg
}

// config is what the CLI reads from tg.flags, through the same flags and
// loader.
func (tg *target) config(t *testing.T) appconfig.Config {
	t.Helper()
	var cfg appconfig.Config
	app := &cli.App{Commands: []*cli.Command{{
		Name: "config", Flags: cmdline.ConnectionFlags(),
		Action: func(c *cli.Context) error {
			var err error
			cfg, err = queueconn.LoadConfig(c, cmdline.ConnectionOverrides(c))
			return err
		},
	}}}
	if err := app.Run(append([]string{"laraworker", "config"}, tg.flags...)); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func setPassword(t *testing.T, pw string) {
	if pw != "" {
		t.Setenv("LARAWORKER_DB_PASSWORD", pw)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func randomSuffix(t *testing.T) string {
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// runCLI runs laraworker in-process as main does and returns its output
// and exit status.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCLIWith(t, strings.NewReader(""), args...)
}

// runCLIWith runs the CLI with stdin read from in (never the test's own
// stdin). stderr takes concurrent writes: a worker's log (demo).
func runCLIWith(t *testing.T, in io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	app := testApp()
	var out bytes.Buffer
	var errb lockedBuffer
	app.Writer, app.ErrWriter, app.Reader = &out, &errb, in
	code = Run(app, append([]string{"laraworker"}, args...))
	return out.String(), errb.String(), code
}

// run puts the connection flags after the arguments, as users of artisan
// write them.
func (tg *target) run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runCLI(t, append(args, tg.flags...)...)
}

func (tg *target) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := tg.run(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return out
}

// jobs reads the whole jobs table, oldest first.
func (tg *target) jobs(t *testing.T) []jobqueue.JobRow {
	t.Helper()
	d := tg.q.Dialect()
	rows, err := tg.q.DB().QueryContext(tg.ctx, "select id, queue, payload, attempts, reserved_at, available_at, created_at from "+
		d.Quote(tg.cfg.JobsTable)+" order by id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []jobqueue.JobRow
	for rows.Next() {
		var j jobqueue.JobRow
		var reserved sql.NullInt64
		if err := rows.Scan(&j.ID, &j.Queue, &j.Payload, &j.Attempts, &reserved, &j.AvailableAt, &j.CreatedAt); err != nil {
			t.Fatal(err)
		}
		if reserved.Valid {
			j.ReservedAt = &reserved.Int64
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (tg *target) jobByID(t *testing.T, id int64) jobqueue.JobRow {
	t.Helper()
	for _, j := range tg.jobs(t) {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("no jobs row %d", id)
	return jobqueue.JobRow{}
}

// pushed pushes through the CLI and returns the new row.
func (tg *target) pushed(t *testing.T, args ...string) jobqueue.JobRow {
	t.Helper()
	var res struct {
		ID   int64  `json:"id"`
		UUID string `json:"uuid"`
	}
	out := tg.mustRun(t, append(append([]string{"push"}, args...), "--json")...)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("push output %q: %v", out, err)
	}
	return tg.jobByID(t, res.ID)
}

// failJob moves a pushed job to failed_jobs as a worker would, with q's
// clock, and returns its uuid.
func failJob(t *testing.T, ctx context.Context, q *dbqueue.Queue, j jobqueue.JobRow) string {
	t.Helper()
	p, err := payload.Parse(j.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Fail(ctx, j, p.UUID, "RuntimeException: boom in /app/Jobs/X.php:12", jobqueue.Followup{}); err != nil {
		t.Fatal(err)
	}
	return p.UUID
}

func (tg *target) failedUUIDs(t *testing.T) []string {
	t.Helper()
	failed, err := tg.q.ListFailed(tg.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range failed {
		out = append(out, f.UUID)
	}
	return out
}

func TestFailedListsFailedJobs(t *testing.T) {
	forEachEngine(t, func(t *testing.T, tg *target) {
		out := tg.mustRun(t, "failed")
		if out != "No failed jobs!\n" {
			t.Errorf("empty failed_jobs: got %q", out)
		}
		a := failJob(t, tg.ctx, tg.q, tg.pushed(t, `App\Jobs\SendMail`, "--queue", "mail"))
		b := failJob(t, tg.ctx, tg.q, tg.pushed(t, `App\Jobs\Report`))

		out = tg.mustRun(t, "failed")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 6 {
			t.Fatalf("want a table of 2 rows (6 lines), got:\n%s", out)
		}
		for _, l := range []int{0, 2, 5} {
			if !strings.HasPrefix(lines[l], "+-") || strings.Trim(lines[l], "+-") != "" {
				t.Errorf("line %d is not a border: %q", l, lines[l])
			}
		}
		if !strings.HasPrefix(lines[1], "| ID ") || !strings.Contains(lines[1], "| Connection | Queue   | Class             | Failed At           |") {
			t.Errorf("header: %q", lines[1])
		}
		// Newest first, as queue:failed.
		if !strings.HasPrefix(lines[3], "| "+b+" | database   | default | App\\Jobs\\Report   | ") ||
			!strings.HasPrefix(lines[4], "| "+a+" | database   | mail    | App\\Jobs\\SendMail | ") {
			t.Errorf("rows:\n%s\n%s", lines[3], lines[4])
		}
		if len(lines[1]) != len(lines[3]) || len(lines[0]) != len(lines[1]) {
			t.Errorf("ragged table:\n%s", out)
		}

		// snake_case keys, as failed_jobs' columns; failedAt kept a release.
		var listed []map[string]any
		if err := json.Unmarshal([]byte(tg.mustRun(t, "failed", "--json", "--queue", "mail")), &listed); err != nil {
			t.Fatal(err)
		}
		if len(listed) != 1 || listed[0]["uuid"] != a || listed[0]["class"] != `App\Jobs\SendMail` || listed[0]["queue"] != "mail" ||
			listed[0]["connection"] != "database" || !strings.HasPrefix(listed[0]["exception"].(string), "RuntimeException: boom") ||
			listed[0]["failed_at"] == "" || listed[0]["failed_at"] != listed[0]["failedAt"] {
			t.Errorf("failed --json --queue=mail: %+v", listed)
		}
	})
}

func TestRetryPushesBackLikeQueueRetry(t *testing.T) {
	forEachEngine(t, func(t *testing.T, tg *target) {
		// Non-ASCII and an empty object make queue:retry's re-encoding
		// visible: \u00e9 and [] instead of é and {}.
		job := tg.pushed(t, `App\Jobs\Greet`, "--prop", "name=Zoé", "--prop", "opts={}", "--queue", "greetings", "--tries", "3")
		uuid := failJob(t, tg.ctx, tg.q, job)
		if len(tg.jobs(t)) != 0 {
			t.Fatal("the failed job is still in jobs")
		}

		before := time.Now().Unix()
		out := tg.mustRun(t, "retry", uuid)
		if out != "The failed job ["+uuid+"] has been pushed back onto the queue!\n" {
			t.Errorf("retry output %q", out)
		}
		jobs := tg.jobs(t)
		if len(jobs) != 1 {
			t.Fatalf("want 1 jobs row, got %d", len(jobs))
		}
		got := jobs[0]
		want, err := payload.ReencodeLikeRetry(job.Payload, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Payload, want) {
			t.Errorf("payload:\n got %s\nwant %s", got.Payload, want)
		}
		if bytes.Equal(got.Payload, job.Payload) || !bytes.Contains(got.Payload, []byte(`Zo\u00e9`)) {
			t.Errorf("payload was not re-encoded as queue:retry does: %s", got.Payload)
		}
		p, err := payload.Parse(got.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if p.UUID != uuid || got.Queue != "greetings" || got.Attempts != 0 || got.ReservedAt != nil ||
			got.AvailableAt < before || got.AvailableAt > time.Now().Unix() {
			t.Errorf("row: uuid %s queue %s attempts %d reserved %v available_at %d", p.UUID, got.Queue, got.Attempts, got.ReservedAt, got.AvailableAt)
		}
		if left := tg.failedUUIDs(t); len(left) != 0 {
			t.Errorf("failed_jobs still holds %v", left)
		}

		// As artisan: the unknown id is reported, the exit status is 0.
		_, stderr, code := tg.run(t, "retry", "no-such-uuid")
		if code != 0 || stderr != "Unable to find failed job with ID [no-such-uuid].\n" {
			t.Errorf("unknown id: exit %d, stderr %q", code, stderr)
		}
	})
}

func TestRetryAllOfOneQueue(t *testing.T) {
	forEachEngine(t, func(t *testing.T, tg *target) {
		x1 := failJob(t, tg.ctx, tg.q, tg.pushed(t, `App\Jobs\A`, "--queue", "x"))
		y := failJob(t, tg.ctx, tg.q, tg.pushed(t, `App\Jobs\B`, "--queue", "y"))
		x2 := failJob(t, tg.ctx, tg.q, tg.pushed(t, `App\Jobs\C`, "--queue", "x"))

		var res []retryJSON
		if err := json.Unmarshal([]byte(tg.mustRun(t, "retry", "all", "--queue=x", "--json")), &res); err != nil {
			t.Fatal(err)
		}
		if len(res) != 2 || res[0].UUID != x2 || res[1].UUID != x1 || res[0].JobID == 0 || res[0].Error != "" {
			t.Errorf("retry all --queue=x: %+v", res)
		}
		if left := tg.failedUUIDs(t); len(left) != 1 || left[0] != y {
			t.Errorf("failed_jobs left: %v, want only %s", left, y)
		}
		for _, j := range tg.jobs(t) {
			if j.Queue != "x" {
				t.Errorf("a job of queue %s was pushed", j.Queue)
			}
		}
		_, stderr, code := tg.run(t, "retry", "--queue=nothing-here")
		if code != 0 || stderr != "Unable to find failed jobs for queue [nothing-here].\n" {
			t.Errorf("empty queue: exit %d, stderr %q", code, stderr)
		}
		// Flags before the arguments work too.
		out, stderr, code := runCLI(t, append(append([]string{"retry"}, tg.flags...), "all")...)
		if code != 0 || out != "The failed job ["+y+"] has been pushed back onto the queue!\n" {
			t.Errorf("retry all: exit %d, %q %q", code, out, stderr)
		}
	})
}

func TestRetryRefreshesAnExpiredRetryUntil(t *testing.T) {
	forEachEngine(t, func(t *testing.T, tg *target) {
		// A 12.11+ payload whose retryUntil came from a retryUntil() method
		// (no property): dispatched an hour ago with a 600 s window.
		now := time.Now()
		created := now.Add(-time.Hour)
		raw, err := payload.BuildObjectPayload(payload.NewCommand(`App\Jobs\Window`, nil, payload.Dispatch{Shape: payload.Shape12}),
			payload.BuildOptions{Shape: payload.Shape12, Now: created})
		if err != nil {
			t.Fatal(err)
		}
		until := created.Unix() + 600
		if raw, err = payload.ReencodeLikeRetry(raw, &until); err != nil {
			t.Fatal(err)
		}
		id, err := tg.q.Push(tg.ctx, jobqueue.PushItem{Payload: raw})
		if err != nil {
			t.Fatal(err)
		}
		uuid := failJob(t, tg.ctx, tg.q, tg.jobByID(t, id))
		tg.mustRun(t, "retry", uuid)
		p, err := payload.Parse(tg.jobs(t)[0].Payload)
		if err != nil {
			t.Fatal(err)
		}
		if p.RetryUntil == nil || *p.RetryUntil < now.Unix()+600 || *p.RetryUntil > time.Now().Unix()+600 {
			t.Errorf("retryUntil %v, want now + 600 (now %d)", p.RetryUntil, now.Unix())
		}
	})
}

func TestForget(t *testing.T) {
	forEachEngine(t, func(t *testing.T, tg *target) {
		a := failJob(t, tg.ctx, tg.q, tg.pushed(t, `App\Jobs\A`))
		b := failJob(t, tg.ctx, tg.q, tg.pushed(t, `App\Jobs\B`))
		if out := tg.mustRun(t, "forget", a); out != "Failed job deleted successfully!\n" {
			t.Errorf("forget: %q", out)
		}
		if left := tg.failedUUIDs(t); len(left) != 1 || left[0] != b {
			t.Errorf("left %v, want [%s]", left, b)
		}
		_, stderr, code := tg.run(t, "forget", a)
		if code != 1 || stderr != "laraworker: No failed job matches the given ID.\n" {
			t.Errorf("forget again: exit %d, %q", code, stderr)
		}
	})
}

// failedAt fails a job with failed_at set hoursAgo hours back.
func (tg *target) failedHoursAgo(t *testing.T, class string, hoursAgo int) string {
	t.Helper()
	past := time.Now().Add(-time.Duration(hoursAgo) * time.Hour)
	q, err := dbqueue.Open(tg.ctx, tg.cfg, dbqueue.Options{Clock: func() time.Time { return past }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	return failJob(t, tg.ctx, q, tg.pushed(t, class))
}

func TestFlushAndPruneFailed(t *testing.T) {
	forEachEngine(t, func(t *testing.T, tg *target) {
		old := tg.failedHoursAgo(t, `App\Jobs\Old`, 72)
		mid := tg.failedHoursAgo(t, `App\Jobs\Mid`, 30)
		recent := tg.failedHoursAgo(t, `App\Jobs\Recent`, 1)

		if out := tg.mustRun(t, "flush", "--hours", "48"); out != "All jobs that failed more than 48 hours ago have been deleted successfully.\n" {
			t.Errorf("flush --hours: %q", out)
		}
		if left := tg.failedUUIDs(t); len(left) != 2 || left[0] != recent || left[1] != mid {
			t.Errorf("after flush --hours 48: %v (old %s)", left, old)
		}
		if out := tg.mustRun(t, "prune-failed"); out != "1 entries deleted!\n" {
			t.Errorf("prune-failed: %q", out)
		}
		if left := tg.failedUUIDs(t); len(left) != 1 || left[0] != recent {
			t.Errorf("after prune-failed: %v", left)
		}
		if out := tg.mustRun(t, "prune-failed", "--hours=2", "--json"); out != "{\n  \"deleted\": 0\n}\n" {
			t.Errorf("prune-failed --hours=2: %q", out)
		}
		tg.failedHoursAgo(t, `App\Jobs\Another`, 0)
		if out := tg.mustRun(t, "flush"); out != "All failed jobs deleted successfully!\n" {
			t.Errorf("flush: %q", out)
		}
		if left := tg.failedUUIDs(t); len(left) != 0 {
			t.Errorf("after flush: %v", left)
		}
	})
}

func TestClearAndSize(t *testing.T) {
	forEachEngine(t, func(t *testing.T, tg *target) {
		for range 3 {
			tg.pushed(t, `App\Jobs\A`)
		}
		tg.pushed(t, `App\Jobs\A`, "--delay", "600")
		tg.pushed(t, `App\Jobs\B`, "--queue", "x")
		tg.pushed(t, `App\Jobs\B`, "--queue", "x")
		if j, err := tg.q.Claim(tg.ctx, []string{"default"}, 1, jobqueue.ClaimOptions{}); err != nil || len(j) != 1 {
			t.Fatalf("claim: %v %v", j, err)
		}

		want := "" +
			"+---------+-------+---------+----------+-------+\n" +
			"| queue   | ready | delayed | reserved | total |\n" +
			"+---------+-------+---------+----------+-------+\n" +
			"| default | 2     | 1       | 1        | 4     |\n" +
			"| x       | 2     | 0       | 0        | 2     |\n" +
			"+---------+-------+---------+----------+-------+\n"
		if out := tg.mustRun(t, "size"); out != want {
			t.Errorf("size:\n%s\nwant:\n%s", out, want)
		}

		out := tg.mustRun(t, "clear", "--queue", "x", "--force")
		if out != "Cleared 2 jobs from the [x] queue\n" {
			t.Errorf("clear: %q", out)
		}
		var sizes []sizeJSON
		if err := json.Unmarshal([]byte(tg.mustRun(t, "size", "--json", "--queue", "x,default")), &sizes); err != nil {
			t.Fatal(err)
		}
		wantSizes := []sizeJSON{{Queue: "x"}, {Queue: "default", Ready: 2, Delayed: 1, Reserved: 1, Total: 4}}
		if fmt.Sprint(sizes) != fmt.Sprint(wantSizes) {
			t.Errorf("size --json: %+v, want %+v", sizes, wantSizes)
		}
		// Without --queue, clear empties the default queue, reserved rows too.
		if out := tg.mustRun(t, "clear"); out != "Cleared 4 jobs from the [default] queue\n" {
			t.Errorf("clear: %q", out)
		}
		if n := len(tg.jobs(t)); n != 0 {
			t.Errorf("%d rows left", n)
		}
	})
}

func TestTablesIsIdempotent(t *testing.T) {
	tg := newTarget(t, appconfig.EngineSQLite)
	out := tg.mustRun(t, "tables", "--json")
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got["jobs"] != tg.cfg.JobsTable || got["failed"] != tg.cfg.FailedTable || got["batches"] != tg.cfg.BatchesTable {
		t.Errorf("tables --json: %v", got)
	}
	tg.pushed(t, `App\Jobs\A`)
	tg.mustRun(t, "tables")
	if n := len(tg.jobs(t)); n != 1 {
		t.Errorf("tables touched an existing table: %d rows", n)
	}
}

// Every command's help and the errors a user can provoke must never show
// the DB password or the APP_KEY.
func TestSecretsNeverPrinted(t *testing.T) {
	const password = "Pw-very-secret-4711"
	const appKey = "base64:c2VjcmV0IGtleSBub3QgdG8gYmUgc2hvd24hIQ==" // 30 bytes: no cipher takes it
	t.Setenv("LARAWORKER_DB_PASSWORD", password)
	t.Setenv("LARAWORKER_APP_KEY", appKey)
	env := filepath.Join(t.TempDir(), "no.env")
	check := func(what, out string) {
		t.Helper()
		for _, secret := range []string{password, appKey, strings.TrimPrefix(appKey, "base64:")} {
			if strings.Contains(out, secret) {
				t.Errorf("%s printed a secret:\n%s", what, out)
			}
		}
	}
	runs := [][]string{{"--help"}}
	for _, cmd := range testApp().Commands {
		runs = append(runs, []string{cmd.Name, "--help"}, []string{cmd.Name, "-h"})
	}
	unreachable := []string{"--env", env, "--db", "mysql", "--db-host", "127.0.0.1", "--db-port", "1", "--db-database", "test"}
	runs = append(runs,
		append([]string{"failed"}, unreachable...),
		append([]string{"retry", "all"}, unreachable...),
		append([]string{"push", `App\Jobs\X`}, unreachable...),
		append([]string{"size", "--db", "pgsql", "--db-port", "1"}, unreachable[:2]...),
		// A wrong password on a reachable server: the driver's refusal.
		[]string{"failed", "--env", env, "--db", "mysql", "--db-host", "127.0.0.1", "--db-username", "root", "--db-database", "test"},
		// A key of the wrong size, on a database that works.
		[]string{"push", `App\Jobs\X`, "--encrypt", "--env", env, "--db", "sqlite", "--db-database", filepath.Join(t.TempDir(), "db.sqlite")},
		[]string{"retry", "--env", env, "--db", "sqlite", "--db-database", filepath.Join(t.TempDir(), "db.sqlite"), "all"},
	)
	errorsSeen := 0
	for _, args := range runs {
		out, stderr, code := runCLI(t, args...)
		check(strings.Join(args, " "), out+stderr)
		if code != 0 {
			errorsSeen++
			if strings.Count(strings.TrimSuffix(stderr, "\n"), "\n") != 0 {
				t.Errorf("%v: error is not one line: %q", args, stderr)
			}
		}
	}
	if errorsSeen < 5 {
		t.Errorf("only %d runs failed: the error paths were not exercised", errorsSeen)
	}
}
