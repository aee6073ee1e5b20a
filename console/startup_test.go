package console

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/testapp"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// runWorkCLI runs `laraworker work` with args and returns its combined
// output and exit code.
func runWorkCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(laraworkerBinary(t), append([]string{"work", "--sleep", "0.05"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// assertUntouched: a bad setup claims and fails nothing.
func assertUntouched(t *testing.T, q *database.Queue, jobs int) {
	t.Helper()
	var n, reserved int
	if err := q.DB().QueryRow("select count(*), count(reserved_at) from jobs where attempts = 0").Scan(&n, &reserved); err != nil {
		t.Fatal(err)
	}
	if n != jobs || reserved != 0 || testapp.CountRows(t, q, "failed_jobs") != 0 {
		t.Errorf("jobs untouched %d of %d (reserved %d), failed %d", n, jobs, reserved, testapp.CountRows(t, q, "failed_jobs"))
	}
}

// TestWorkBadPaths: a --env or --app that does not exist is an error that
// names it; the worker never falls back to SQLite defaults.
func TestWorkBadPaths(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	testapp.PushJob(t, q, `App\Jobs\A`)
	// A database.sqlite where the default would look must not be used.
	os.MkdirAll(filepath.Join(dir, "database"), 0o755)
	os.WriteFile(filepath.Join(dir, "database", "database.sqlite"), nil, 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--env", filepath.Join(dir, "nope", ".env")}, "--env " + filepath.Join(dir, "nope", ".env") + " does not exist"},
		{[]string{"--app", filepath.Join(dir, "nope")}, "is not a folder"},
		{[]string{"--app", dir}, "holds no artisan"},
	} {
		out, code := runWorkCLI(t, append(c.args, "--stop-when-empty", "--route", `App\Jobs\A=noop`)...)
		if code != 2 || !strings.Contains(out, c.want) || strings.Contains(out, "worker started") {
			t.Errorf("%v: exit %d, output:\n%s", c.args, code, out)
		}
	}
	assertUntouched(t, q, 1)
}

// TestWorkMissingTables: a missing table stops the worker before it claims
// anything, naming the artisan command and `laraworker tables`.
func TestWorkMissingTables(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	testapp.PushJob(t, q, `App\Jobs\A`)
	if _, err := q.DB().Exec("drop table job_batches"); err != nil {
		t.Fatal(err)
	}
	out, code := runWorkCLI(t, "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--route", `App\Jobs\A=noop`)
	for _, want := range []string{`the job_batches table "job_batches" does not exist`, "php artisan queue:batches-table", "laraworker tables"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code != 2 || strings.Contains(out, "worker started") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	assertUntouched(t, q, 1)

	// --create-tables is the way out the message names.
	out, code = runWorkCLI(t, "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--create-tables", "--route", `App\Jobs\A=noop`)
	if code != 0 || testapp.CountRows(t, q, "jobs") != 0 {
		t.Errorf("with --create-tables: exit %d, %d jobs left\n%s", code, testapp.CountRows(t, q, "jobs"), out)
	}
}

// TestWorkRouteWarnings: routes that match no queued job get one warning
// each, naming the classes that are there and the likely meant one; the
// jobs they missed are not claimed, and a good route runs normally. (Read
// without the app's PHP, as here, a class is known only from the queues;
// with it, a --route to a class the app does not have stops the worker:
// e2e TestWorkRefusesWhatItCannotRun.)
func TestWorkRouteWarnings(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	testapp.PushJob(t, q, `App\Jobs\ScalarsJob`)
	testapp.PushJob(t, q, `App\Jobs\ScalarsJob`)
	testapp.PushJob(t, q, `App\Jobs\NoopJob`)
	out, code := runWorkCLI(t, "--env", filepath.Join(dir, ".env"), "--stop-when-empty",
		"--route", `ScalarJob=noop`, "--route", `App\Jobs\ScalarsJobs=noop`)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// (JSON log lines: each backslash is doubled, quotes escaped.)
	for _, route := range []string{`ScalarJob`, `App\\Jobs\\ScalarsJobs`} {
		line := lineWith(out, `"route \"`+route+`\" matches no job on queues default`)
		if line == "" || !strings.Contains(line, `did you mean \"App\\Jobs\\ScalarsJob\"?`) ||
			!strings.Contains(line, `Queued classes: App\\Jobs\\ScalarsJob (2), App\\Jobs\\NoopJob (1)`) || !strings.Contains(line, `"level":"warn"`) {
			t.Errorf("no warning for route %s:\n%s", route, out)
		}
	}
	started := lineWith(out, "worker started")
	for _, want := range []string{`"queues":["default"]`, `"routes":[`, `"concurrency":10`, `"config":"env"`} {
		if !strings.Contains(started, want) {
			t.Errorf("worker started line lacks %s: %s", want, started)
		}
	}
	if !strings.Contains(lineWith(out, `"laravel config"`), `"source":"env"`) {
		t.Errorf("no config source line:\n%s", out)
	}
	assertUntouched(t, q, 3)

	// A --route no displayName can have (doubled or leading backslashes)
	// stops the worker before it claims anything, queues empty or not.
	for _, route := range []string{`App\\Jobs\\ScalarsJob`, `\App\Jobs\ScalarsJob`} {
		out, code = runWorkCLI(t, "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--route", route+"=noop")
		if code != 2 || !strings.Contains(out, "--route "+route+` can never match: Laravel writes class names with single backslashes and no leading one (App\Jobs\ScalarsJob)`) ||
			strings.Contains(out, "worker started") {
			t.Errorf("--route %s: exit %d\n%s", route, code, out)
		}
	}
	assertUntouched(t, q, 3)
}

// TestWorkRouteMatchesClassNamesAsPHPDoes: a route spelled with another
// case than the queued class (PHP class names ignore case, as does the
// handler lookup) gets no "matches no job" warning, and its jobs run.
func TestWorkRouteMatchesClassNamesAsPHPDoes(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	testapp.PushJob(t, q, `App\Jobs\EnumCarbonJob`)
	testapp.PushJob(t, q, `App\Jobs\EnumCarbonJob`)
	out, code := runWorkCLI(t, "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--route", `App\Jobs\EnumCarbonjob=noop`)
	if code != 0 || strings.Contains(out, "matches no job") || strings.Contains(out, "is queued as") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if n := testapp.CountRows(t, q, "jobs"); n != 0 {
		t.Errorf("%d jobs left: the route's handler runs them\n%s", n, out)
	}
}

// TestRouteWarningsFollowTheHandlerLookup: on each engine, a route whose
// queued class differs only in case matches when the claim reaches the
// jobs (MySQL's and SQLite's LIKE ignore case); on PostgreSQL, whose LIKE
// does not, the warning says why the jobs are not claimed and how to
// register the class.
func TestRouteWarningsFollowTheHandlerLookup(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		testapp.PushJob(t, q, `App\Jobs\EnumCarbonJob`)
		testapp.PushJob(t, q, `App\Jobs\NoopJob`)
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\EnumCarbonjob`, func(context.Context, *handlers.Job) error { return nil })
		reg.HandleFunc(`App\Jobs\NoopJob`, func(context.Context, *handlers.Job) error { return nil })
		warnings, err := routeWarnings(context.Background(), q, q.Config().Driver, []string{"default"}, reg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if q.Dialect().Name() != appconfig.EnginePgSQL {
			if len(warnings) != 0 {
				t.Errorf("warnings %q, want none: the claim and the handler lookup both match the class", warnings)
			}
			return
		}
		want := `route "App\Jobs\EnumCarbonjob" is queued as "App\Jobs\EnumCarbonJob" on queues default: PHP class names ignore case, and so does the handler lookup, but the claim's LIKE on pgsql does not, so these jobs are never claimed; register the class as "App\Jobs\EnumCarbonJob"`
		if len(warnings) != 1 || warnings[0] != want {
			t.Errorf("warnings %q, want [%q]", warnings, want)
		}
	})
}

func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestWorkRefusesAQueueConnectionItCannotServe: an app whose queue
// connection is not a database, redis or sqs one (PHP does not push where Go
// reads), or a --connection the app does not define (artisan refuses it),
// stops the worker at start with exit 2, naming the connections to serve
// (read from config/queue.php without PHP here; the same check runs on
// PHP's answer); no job is touched.
func TestWorkRefusesAQueueConnectionItCannotServe(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	testapp.PushJob(t, q, `App\Jobs\A`)
	os.WriteFile(filepath.Join(dir, "artisan"), []byte("<?php\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "config"), 0o755)
	os.WriteFile(filepath.Join(dir, "config", "queue.php"), []byte(`<?php
return [
    'default' => env('QUEUE_CONNECTION', 'sync'),
    'connections' => [
        'sync' => ['driver' => 'sync'],
        'redis' => ['driver' => 'redis', 'queue' => 'default'],
        'database' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90],
    ],
];
`), 0o644)
	out, code := runWorkCLI(t, "--app", dir, "--php", "off", "--route", `App\Jobs\A=noop`, "--stop-when-empty")
	if code != 2 || !strings.Contains(out, `queue connection "sync" (queue.default) has driver "sync", not database, redis, beanstalkd or sqs`) ||
		!strings.Contains(out, "--connection database") || strings.Contains(out, "worker started") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(lineWith(out, `"laravel config"`), `without php (--php off)`) {
		t.Errorf("the config line does not say php was off:\n%s", out)
	}
	out, code = runWorkCLI(t, "--app", dir, "--php", "off", "--connection", "databse", "--route", `App\Jobs\A=noop`, "--stop-when-empty")
	if code != 2 || !strings.Contains(out, `the [databse] queue connection has not been configured: queue connection "databse" (--connection) is not in the app's config/queue.php, which has database, redis, sync; did you mean "database"?`) {
		t.Errorf("unknown connection: exit %d\n%s", code, out)
	}
	assertUntouched(t, q, 1)
	// The other commands refuse it too (exit 1, as artisan's exception).
	cmd := exec.Command(laraworkerBinary(t), "size", "--app", dir, "--php", "off", "--connection", "databse")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "the [databse] queue connection has not been configured") {
		t.Errorf("size --connection databse: %v\n%s", err, out)
	}
}

// TestWorkExceptionTextsFollowTheDetectedVersion: without --laravel-version
// the failed_jobs texts are those of the version the app runs (here from
// composer.lock, read without PHP).
func TestWorkExceptionTextsFollowTheDetectedVersion(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	os.WriteFile(filepath.Join(dir, "artisan"), []byte("<?php\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "composer.lock"), []byte(`{"packages":[{"name":"laravel/framework","version":"v8.83.27"}]}`), 0o644)
	testapp.PushJob(t, q, `App\Jobs\A`)
	if _, err := q.DB().Exec("update jobs set attempts = 1"); err != nil { // its one try is used up
		t.Fatal(err)
	}
	out, code := runWorkCLI(t, "--app", dir, "--php", "off", "--stop-when-empty", "--route", `App\Jobs\A=noop`)
	if code != 0 || !strings.Contains(lineWith(out, `"laravel config"`), `"laravel":"8.83.27"`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var exception string
	if err := q.DB().QueryRow("select exception from failed_jobs").Scan(&exception); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(exception, `App\Jobs\A has been attempted too many times or run too long. The job may have previously timed out.`) {
		t.Errorf("exception %.200q, want Laravel 8's MaxAttemptsExceeded text", exception)
	}
}

// TestWorkWarnsWhenQueueRestartCannotReachGo: with a cache store Go does
// not share with PHP, work says at startup that queue:restart and shared
// maxExceptions do not reach it, and what to do; with the database store
// it says nothing.
func TestWorkWarnsWhenQueueRestartCannotReachGo(t *testing.T) {
	cases := []struct {
		env, version, store, fix string
	}{
		{"CACHE_DRIVER=file\n", "", "file", "CACHE_STORE=database (CACHE_DRIVER=database before Laravel 11)"},
		{"CACHE_STORE=redis\n", "12.67", "redis", "use the database cache store: CACHE_STORE=database"},
		{"CACHE_DRIVER=memcached\n", "10.50", "memcached", "use the database cache store: CACHE_DRIVER=database"},
		{"", "", "", "CACHE_STORE=database (CACHE_DRIVER=database before Laravel 11)"},
		{"CACHE_DRIVER=database\n", "", "database", ""},
	}
	for _, c := range cases {
		dir, q := testapp.SqliteApp(t)
		appendFile(t, filepath.Join(dir, ".env"), c.env)
		if c.store == "database" {
			createCacheTable(t, q, "cache")
		}
		args := []string{"--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--route", `App\Jobs\A=noop`}
		if c.version != "" {
			args = append(args, "--laravel-version", c.version)
		}
		out, code := runWorkCLI(t, args...)
		line := lineWith(out, "does not stop this worker")
		switch {
		case code != 0:
			t.Errorf("%q: exit %d:\n%s", c.env, code, out)
		case c.store == "database":
			if line != "" {
				t.Errorf("database store: %s", line)
			}
		case !strings.Contains(line, `"level":"warn"`) || !strings.Contains(line, `"cache_store":"`+c.store+`"`) ||
			!strings.Contains(line, "does not stop this worker") || !strings.Contains(line, "restart Go workers with SIGTERM") ||
			!strings.Contains(line, c.fix):
			t.Errorf("%q: no warning that says what to do:\n%s", c.env, out)
		case strings.Contains(line, "queue:pause") != (c.version != "10.50"):
			// 12.40+'s pauses (and 13.6's debounce) live in the cache too.
			t.Errorf("%q on %q: the warning should name queue:pause from 12.40 (or an unknown version) on:\n%s", c.env, c.version, line)
		}
	}
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}

// TestNoEnvSaysWhereTheAppIs: run outside the app (no .env, no --app,
// no --env), a command says so and how to point it at the app, instead of
// SQLite's "unable to open database file"; it creates nothing here.
func TestNoEnvSaysWhereTheAppIs(t *testing.T) {
	for _, withFolder := range []bool{false, true} {
		here := t.TempDir()
		if withFolder { // database/ exists: SQLite would create the file
			if err := os.Mkdir(filepath.Join(here, "database"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, args := range [][]string{{"failed"}, {"work", "--route", `App\Jobs\A=noop`, "--stop-when-empty"}} {
			cmd := exec.Command(laraworkerBinary(t), args...)
			cmd.Dir = here
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
			out, err := cmd.CombinedOutput()
			want := 1
			if args[0] == "work" {
				want = 2 // work stops with 2 for a setup it refuses at start
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != want || !strings.Contains(string(out), "no .env in "+here+" and no --app or --env") ||
				!strings.Contains(string(out), "pass --app DIR") || strings.Contains(string(out), "unable to open") {
				t.Errorf("%v (database/ there: %v): %v\n%s", args, withFolder, err, out)
			}
			if _, err := os.Stat(filepath.Join(here, "database", "database.sqlite")); err == nil {
				t.Errorf("%v created database/database.sqlite", args)
			}
		}
	}
	// A database named by the environment needs no .env: `tables` creates
	// a new SQLite file's tables as before.
	here := t.TempDir()
	cmd := exec.Command(laraworkerBinary(t), "tables")
	cmd.Dir = here
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "DB_CONNECTION=sqlite", "DB_DATABASE=" + filepath.Join(here, "new.sqlite")}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "are ready") {
		t.Errorf("tables on DB_DATABASE without a .env: %v\n%s", err, out)
	}
}

// createCacheTable makes the table `php artisan cache:table` creates.
func createCacheTable(t *testing.T, q *database.Queue, table string) {
	t.Helper()
	d := q.Dialect()
	ddl := fmt.Sprintf("create table %s (%s varchar(255) not null primary key, %s text not null, %s integer not null)",
		d.Quote(table), d.Quote("key"), d.Quote("value"), d.Quote("expiration"))
	if _, err := q.DB().Exec(ddl); err != nil {
		t.Fatal(err)
	}
}

// TestWorkNamesAMissingCacheTable: an app whose cache store is database
// and has no cache table gets a startup error naming the artisan command,
// not a restart-signal error every loop.
func TestWorkNamesAMissingCacheTable(t *testing.T) {
	dir, _ := testapp.SqliteApp(t)
	appendFile(t, filepath.Join(dir, ".env"), "CACHE_DRIVER=database\n")
	out, code := runWorkCLI(t, "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--route", `App\Jobs\A=noop`)
	if code != 2 || !strings.Contains(out, `the cache table "cache" does not exist`) || !strings.Contains(out, "php artisan cache:table") ||
		strings.Contains(out, "--create-tables") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
