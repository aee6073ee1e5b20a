// Package testapp builds the small SQLite-backed Laravel-like app the
// CLI's tests run against (the .env, the tables, jobs pushed as Laravel
// would). It imports nothing of the CLI, so package console's own tests
// and the command packages' tests share it. Only tests import it.
package testapp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// FixtureKey is the APP_KEY of the fixtures' app (testdata).
const FixtureKey = "base64:bGFyYXdvcmtlciBmaXh0dXJlIGtleSwgMzIgYnl0ZXM="

// SqliteApp is a Laravel-like app dir with a .env pointing at SQLite and
// the tables created.
func SqliteApp(t *testing.T) (dir string, q *database.Queue) {
	t.Helper()
	dir = t.TempDir()
	env := "DB_CONNECTION=sqlite\nDB_DATABASE=" + filepath.Join(dir, "db.sqlite") + "\nAPP_KEY=" + FixtureKey + "\nDB_PASSWORD=hunter2-secret\n"
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := appconfig.Load(context.Background(), appconfig.Options{EnvOnly: true, EnvFile: filepath.Join(dir, ".env"), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	q, err = database.Open(context.Background(), cfg, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	if err := q.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir, q
}

// PushJob pushes a job of class with props and returns its uuid.
func PushJob(t *testing.T, q *database.Queue, class string, props ...phpserialize.Entry) string {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(class, props...), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Push(context.Background(), jobqueue.PushItem{Payload: raw}); err != nil {
		t.Fatal(err)
	}
	p, _ := payload.Parse(raw)
	return p.UUID
}

// CountRows counts a table's rows ("jobs where queue = 'go'" counts
// some).
func CountRows(t *testing.T, q *database.Queue, table string) int {
	t.Helper()
	var n int
	if err := q.DB().QueryRow("select count(*) from " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
