// Package clitest runs the laraworker CLI in-process for the tests of the
// command packages: the app as the binary builds it, a Target (one
// database engine with freshly named tables) and the fixtures those tests
// share. Only tests import it.
package clitest

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
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
	"github.com/urfave/cli/v2"
)

// App is the laraworker binary's app without bench (package bench
// imports console): what the in-process CLI tests run.
func App() *cli.App {
	app := console.New(handlers.NewRegistry(), console.Options{Name: "laraworker"})
	app.Commands = append(app.Commands, console.DemoCommand())
	return app
}

// RunStdin runs the CLI in-process with stdin and returns stdout, stderr
// and the exit status.
func RunStdin(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	app := App()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter, app.Reader = &out, &errOut, strings.NewReader(stdin)
	code := console.Run(app, append([]string{"laraworker"}, args...))
	return out.String(), errOut.String(), code
}

// Target is one database engine with freshly named tables, reached by the
// CLI through flags and by the test through a database.Queue on the same
// configuration.
type Target struct {
	Engine string
	// Flags select the engine and the tables; Run appends them.
	Flags []string
	Cfg   appconfig.Config
	Q     *database.Queue
	Ctx   context.Context
}

// Engines are the database engines every CLI test runs on.
var Engines = []string{appconfig.EngineMySQL, appconfig.EnginePgSQL, appconfig.EngineSQLite}

// ForEachEngine runs fn per engine. MariaDB and PostgreSQL are skipped when
// unreachable unless LARAWORKER_TEST_REQUIRE_DB is set.
func ForEachEngine(t *testing.T, fn func(t *testing.T, tg *Target)) {
	for _, engine := range Engines {
		t.Run(engine, func(t *testing.T) { fn(t, NewTarget(t, engine)) })
	}
}

// NewTarget is engine with freshly named tables, made by the CLI's own
// `tables` (skipped as ForEachEngine says); they are dropped at the end.
func NewTarget(t *testing.T, engine string) *Target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	sfx := RandomSuffix(t)
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
	testdsn.NeedEngine(t, engine)
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
	tg := &Target{Engine: engine, Flags: flags, Ctx: ctx}
	// The tables come from the command under test.
	if _, stderr, code := tg.Run(t, "tables"); code != 0 {
		if engine != appconfig.EngineSQLite && os.Getenv("LARAWORKER_TEST_REQUIRE_DB") == "" {
			t.Skipf("%s not reachable: %s", engine, stderr)
		}
		t.Fatalf("tables: exit %d: %s", code, stderr)
	}
	tg.Cfg = tg.config(t)
	q, err := database.Open(ctx, tg.Cfg, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := q.DropTables(context.Background()); err != nil {
			t.Errorf("dropping tables: %v", err)
		}
		q.Close()
	})
	tg.Q = q
	return tg
}

// config is what the CLI reads from tg.Flags, through the same flags and
// loader.
func (tg *Target) config(t *testing.T) appconfig.Config {
	t.Helper()
	var cfg appconfig.Config
	app := &cli.App{Commands: []*cli.Command{{
		Name: "config", Flags: console.ConnectionFlags(),
		Action: func(c *cli.Context) error {
			var err error
			cfg, err = console.LoadConfig(c, console.ConnectionOverrides(c))
			return err
		},
	}}}
	if err := app.Run(append([]string{"laraworker", "config"}, tg.Flags...)); err != nil {
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

// RandomSuffix names a test's own tables.
func RandomSuffix(t *testing.T) string {
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// RunCLI runs laraworker in-process as main does and returns its output
// and exit status.
func RunCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return RunCLIWith(t, strings.NewReader(""), args...)
}

// RunCLIWith runs the CLI with stdin read from in (never the test's own
// stdin). stderr takes concurrent writes: a worker's log (demo).
func RunCLIWith(t *testing.T, in io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	app := App()
	var out bytes.Buffer
	var errb LockedBuffer
	app.Writer, app.ErrWriter, app.Reader = &out, &errb, in
	code = console.Run(app, append([]string{"laraworker"}, args...))
	return out.String(), errb.String(), code
}

// Run runs the CLI with the connection flags after the arguments, as
// users of artisan write them.
func (tg *Target) Run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return RunCLI(t, append(args, tg.Flags...)...)
}

// MustRun is Run's stdout; a non-zero exit status fails the test.
func (tg *Target) MustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := tg.Run(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return out
}

// Jobs reads the whole jobs table, oldest first.
func (tg *Target) Jobs(t *testing.T) []jobqueue.JobRow {
	t.Helper()
	d := tg.Q.Dialect()
	rows, err := tg.Q.DB().QueryContext(tg.Ctx, "select id, queue, payload, attempts, reserved_at, available_at, created_at from "+
		d.Quote(tg.Cfg.JobsTable)+" order by id")
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

// JobByID is the jobs row id.
func (tg *Target) JobByID(t *testing.T, id int64) jobqueue.JobRow {
	t.Helper()
	for _, j := range tg.Jobs(t) {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("no jobs row %d", id)
	return jobqueue.JobRow{}
}

// Pushed pushes through the CLI and returns the new row.
func (tg *Target) Pushed(t *testing.T, args ...string) jobqueue.JobRow {
	t.Helper()
	var res struct {
		ID   int64  `json:"id"`
		UUID string `json:"uuid"`
	}
	out := tg.MustRun(t, append(append([]string{"push"}, args...), "--json")...)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("push output %q: %v", out, err)
	}
	return tg.JobByID(t, res.ID)
}

// FailJob moves a pushed job to failed_jobs as a worker would, with q's
// clock, and returns its uuid.
func FailJob(t *testing.T, ctx context.Context, q *database.Queue, j jobqueue.JobRow) string {
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

// FailedUUIDs are the uuids of failed_jobs, newest first.
func (tg *Target) FailedUUIDs(t *testing.T) []string {
	t.Helper()
	failed, err := tg.Q.ListFailed(tg.Ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range failed {
		out = append(out, f.UUID)
	}
	return out
}

// Write writes content to a new file name in a temporary folder and
// returns its path.
func Write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// LockedBuffer is a bytes.Buffer a running process writes to while the
// test reads it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is what was written so far.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
