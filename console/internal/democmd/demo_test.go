package democmd_test

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/clitest"
)

// appDatabase writes an SQLite file holding what a Laravel 11+ app's own
// database holds (users, jobs, failed_jobs) and returns its bytes.
func appDatabase(t *testing.T, path string) []byte {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"create table users (id integer primary key, email text)",
		"insert into users (email) values ('ada@example.com')",
		"create table jobs (id integer primary key autoincrement, queue text, payload text, attempts integer, reserved_at integer, available_at integer, created_at integer)",
		"create table failed_jobs (id integer primary key autoincrement, uuid text)",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDemoNeverTouchesTheFolder: run inside a Laravel 11+ app folder, the
// demo works on a temporary database it names and removes, and leaves the
// app's database/database.sqlite as it was.
func TestDemoNeverTouchesTheFolder(t *testing.T) {
	dir := t.TempDir()
	appDB := filepath.Join(dir, "database", "database.sqlite")
	before := appDatabase(t, appDB)
	t.Chdir(dir)
	out, stderr, code := clitest.RunCLI(t, "demo")
	if code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	first, _, _ := strings.Cut(out, "\n")
	temp, ok := strings.CutPrefix(first, "Demo database: ")
	temp, _, _ = strings.Cut(temp, " (temporary, removed at the end; --database FILE keeps one)")
	if !ok || !filepath.IsAbs(temp) || strings.HasPrefix(temp, dir) {
		t.Fatalf("the first line must name the temporary database: %q", first)
	}
	if !strings.Contains(out, "Failed jobs (what `php artisan queue:failed` would list):\n  ") {
		t.Errorf("the demo did not run:\n%s", out)
	}
	if _, err := os.Stat(temp); !os.IsNotExist(err) {
		t.Errorf("the temporary database %s is still there (%v)", temp, err)
	}
	after, err := os.ReadFile(appDB)
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("the app's database changed (%v)", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "database"))
	if len(entries) != 1 {
		t.Errorf("files beside the app's database: %v", entries)
	}
}

// TestDemoKeepsItsDatabase: --database FILE keeps the demo's database, and
// a later demo adds to it.
func TestDemoKeepsItsDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kept", "demo.sqlite")
	for run := 1; run <= 2; run++ {
		out, stderr, code := clitest.RunCLI(t, "demo", "--database", path)
		if code != 0 || !strings.HasPrefix(out, "Demo database: "+path+" (kept)\n") {
			t.Fatalf("run %d: exit %d: %s\n%s", run, code, stderr, out)
		}
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		var failed int
		err = db.QueryRow("select count(*) from failed_jobs").Scan(&failed)
		db.Close()
		if err != nil || failed != run {
			t.Errorf("run %d: %d failed jobs kept (%v), want %d", run, failed, err, run)
		}
	}
}

// TestDemoRefusesAnotherDatabase: a --database file with tables the demo
// did not create, or that is not SQLite, is refused with exit status 1
// and left as it was.
func TestDemoRefusesAnotherDatabase(t *testing.T) {
	dir := t.TempDir()
	appDB := filepath.Join(dir, "database.sqlite")
	before := appDatabase(t, appDB)
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		appDB: "demo: --database " + appDB + " holds tables the demo did not create (users): it looks like an app's database",
		notDB: "demo: --database " + notDB + " is not an SQLite database the demo can use",
	} {
		out, stderr, code := clitest.RunCLI(t, "demo", "--database", file)
		if code != 1 || !strings.Contains(stderr, want) || strings.Contains(out, "Pushed") {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 1 and %q", file, code, stderr, out, want)
		}
	}
	if after, err := os.ReadFile(appDB); err != nil || !bytes.Equal(before, after) {
		t.Errorf("the refused database changed (%v)", err)
	}
}
