package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/gobuild"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// laraworkerBinary builds the laraworker binary once: bench runs its own
// `work` command in child processes, so it needs the real program (a test
// binary has no `work`).
func laraworkerBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "laraworker-bench-bin"); binErr != nil {
			return
		}
		binErr = gobuild.Program(context.Background(), "../..", ".", filepath.Join(binDir, "laraworker"), "")
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "laraworker")
}

// runBinary runs the laraworker binary with an environment that names no
// database, and returns stdout, stderr and the exit status.
func runBinary(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(laraworkerBinary(t), args...)
	cmd.Dir = t.TempDir() // no ./.env to pick up
	cmd.Env = cleanEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "DB_") && !strings.HasPrefix(name, "LARAWORKER_") && !strings.HasPrefix(name, "APP_") {
			env = append(env, kv)
		}
	}
	return env
}

// runInProcess runs the laraworker app (console.New plus bench, as main
// builds it) in this process, for the paths that never start a worker.
func runInProcess(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	app := console.New(handlers.NewRegistry(), console.Options{Name: "laraworker"})
	app.Commands = append(app.Commands, Command())
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	code := console.Run(app, append([]string{"laraworker"}, args...))
	return out.String(), errOut.String(), code
}

// jsonAfterTables is the JSON document bench prints after its tables.
func jsonAfterTables(t *testing.T, out string) []byte {
	t.Helper()
	i := strings.Index(out, "\n{\n")
	if i < 0 {
		t.Fatalf("no JSON in the output:\n%s", out)
	}
	return []byte(out[i+1:])
}

// sqliteTables lists the tables left in a SQLite file.
func sqliteTables(t *testing.T, path string) []string {
	t.Helper()
	q, err := database.Open(context.Background(), appconfig.Config{Driver: appconfig.EngineSQLite, Database: path}, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	rows, err := q.DB().Query("select name from sqlite_master where type = 'table' and name not like 'sqlite!_%' escape '!'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n sql.NullString
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n.String)
	}
	return names
}

// One round of every contender but PHP on SQLite: each drain empties the
// table, the latency phase sees every job, the ratios and idle RSS are
// there, the bench tables are gone at the end, and stderr says why PHP was
// not measured.
func TestBenchDrainsOnSQLite(t *testing.T) {
	t.Parallel() // waits on real time and child processes: beside the other waiting tests
	db := filepath.Join(t.TempDir(), "bench.sqlite")
	out, stderr, code := runBinary(t, "bench", "--db", "sqlite", "--db-database", db,
		"--jobs", "300", "--rounds", "1", "--latency-jobs", "20", "--latency-rate", "100", "--json")
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "php artisan queue:work is not measured: no --laravel-app") {
		t.Errorf("stderr does not say that PHP is skipped and why:\n%s", stderr)
	}
	var rep report
	if err := json.Unmarshal(jsonAfterTables(t, out), &rep); err != nil {
		t.Fatal(err)
	}
	want := []string{"lw-exact", "raw-exact", "lw-c1", "raw-b1", "lw-c16", "raw-b16", "lw-c128", "raw-b128", "raw-2x256", "raw-store128", "raw-store2x128", "raw-store256"}
	if strings.Join(rep.Order, ",") != strings.Join(want, ",") {
		t.Fatalf("contenders %v, want %v (no PHP without --laravel-app)", rep.Order, want)
	}
	for _, name := range want {
		cr := rep.Results[name]
		if len(cr.Drains) != 1 || cr.Drains[0].Jobs != 300 || cr.Drains[0].JobsPerSec <= 0 || cr.Drains[0].Left != 0 {
			t.Errorf("%s: drains %+v", name, cr.Drains)
		}
		if !strings.HasPrefix(name, "raw") && (cr.Drains[0].CPUPer1k <= 0 || cr.Drains[0].PeakRSSMB <= 0) {
			t.Errorf("%s: no CPU or RSS measured: %+v", name, cr.Drains[0])
		}
		if strings.HasPrefix(name, "raw") && cr.Drains[0].RawClientCPUPer1k <= 0 {
			t.Errorf("%s: the raw loop's own CPU was not measured: %+v", name, cr.Drains[0])
		}
	}
	for _, name := range []string{"lw-exact", "lw-c1", "lw-c128"} {
		lat := rep.Results[name].Latency
		if len(lat) != 1 || lat[0].Jobs != 20 || lat[0].Missed != 0 {
			t.Errorf("%s latency: %+v", name, lat)
		}
	}
	if len(rep.Ratios) != 8 || rep.IdleRSSMB <= 0 {
		t.Errorf("ratios %+v, idle RSS %.1f MB", rep.Ratios, rep.IdleRSSMB)
	}
	if tables := sqliteTables(t, db); len(tables) != 0 {
		t.Errorf("bench left tables behind: %v", tables)
	}
}

// With --laravel-app, php artisan queue:work drains a copy of the app; the
// app itself is not touched.
func TestBenchMeasuresPHPOnACopyOfTheApp(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		t.Skip("no php on PATH")
	}
	app, err := filepath.Abs(filepath.Join("..", "..", "testdata", "laravel"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "bench.sqlite")
	out, stderr, code := runBinary(t, "bench", "--db", "sqlite", "--db-database", db, "--laravel-app", app,
		"--only", "php-1,lw-c128", "--jobs", "200", "--php-jobs", "200", "--rounds", "1", "--latency-jobs", "0", "--json")
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, out, stderr)
	}
	var rep report
	if err := json.Unmarshal(jsonAfterTables(t, out), &rep); err != nil {
		t.Fatal(err)
	}
	php := rep.Results["php-1"]
	if php == nil || len(php.Drains) != 1 || php.Drains[0].Jobs != 200 || php.Drains[0].JobsPerSec <= 0 || php.Drains[0].CPUPer1k <= 0 {
		t.Fatalf("php-1: %+v", php)
	}
	if len(rep.Ratios) == 0 || rep.Ratios[0].Name != "lw-c128 / php-1 (jobs/s)" {
		t.Errorf("ratios: %+v", rep.Ratios)
	}
	if _, err := os.Stat(filepath.Join(app, "app", "Jobs", "BenchNoopJob.php")); !os.IsNotExist(err) {
		t.Errorf("bench wrote into the original app: %v", err)
	}
}

// Bad selections fail at once with a message naming the cause.
func TestBenchRejectsBadSelections(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bench.sqlite")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--only", "php-1"}, "php-1 needs --laravel-app"},
		{[]string{"--only", "lw-c128,bogus"}, `unknown contender "bogus"`},
		{[]string{"--processes", "0"}, "--processes 0: want 1 or more"},
		// --php names a program that exists (this test's), so the app check
		// is reached on a machine without php too.
		{[]string{"--laravel-app", t.TempDir(), "--php", os.Args[0]}, "is not a Laravel app"},
		{[]string{"--laravel-app", "testdata/laravel", "--php", "no-such-php-binary"}, `--php "no-such-php-binary"`},
	} {
		args := append([]string{"bench", "--db", "sqlite", "--db-database", db}, tc.args...)
		_, stderr, code := runInProcess(t, args...)
		if code != 1 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: status %d, stderr %q; want status 1 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a rejected run opened the database: %v", err)
	}
}

// The help of bench and bench soak, and their errors, never show the DB
// password or the APP_KEY.
func TestBenchNeverPrintsSecrets(t *testing.T) {
	const password = "Pw-bench-secret-4711"
	const appKey = "base64:bGFyYXdvcmtlciBmaXh0dXJlIGtleSwgMzIgYnl0ZXM="
	t.Setenv("LARAWORKER_DB_PASSWORD", password)
	t.Setenv("LARAWORKER_APP_KEY", appKey)
	env := filepath.Join(t.TempDir(), "no.env")
	unreachable := []string{"--env", env, "--db", "mysql", "--db-host", "127.0.0.1", "--db-port", "1", "--db-database", "test"}
	for _, args := range [][]string{
		{"bench", "--help"},
		{"bench", "soak", "--help"},
		append([]string{"bench"}, unreachable...),
		append([]string{"bench", "soak"}, unreachable...),
	} {
		out, stderr, _ := runInProcess(t, args...)
		for _, secret := range []string{password, appKey, strings.TrimPrefix(appKey, "base64:")} {
			if strings.Contains(out+stderr, secret) {
				t.Errorf("%v printed a secret:\n%s%s", args, out, stderr)
			}
		}
	}
}
