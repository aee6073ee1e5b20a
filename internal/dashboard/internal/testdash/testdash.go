// Package testdash holds what the tests of the dashboard and of its
// snapshot share: payload fixtures, laraworker's tables under a fresh
// prefix, raw statements on a queue's tables, and the large tables of
// the dashboard's benchmarks.
package testdash

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
)

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}

// Fixture is a payload the Laravel 8 test app wrote
// (testdata/payloads/NAME.json), with a fresh uuid and, when class is
// given, another class name.
func Fixture(t testing.TB, name, class string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(Root(), "testdata", "payloads", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	uuid, err := payload.NewUUID()
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(raw), p.UUID, uuid, 1)
	if class != "" {
		s = strings.Replace(s, `"displayName":"`+strings.ReplaceAll(p.DisplayName, `\`, `\\`)+`"`,
			`"displayName":"`+strings.ReplaceAll(class, `\`, `\\`)+`"`, 1)
	}
	return []byte(s)
}

// Fleet creates laraworker's tables in q's database under a fresh
// prefix, dropped at the end of the test.
func Fleet(t testing.TB, q *database.Queue) *fleet.Store {
	t.Helper()
	s := fleet.NewStore(q.DB(), q.Dialect(), fleet.TablesWithPrefix("lw_"+testdsn.Suffix(t)+"_"))
	if err := s.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DropTables(context.Background()) })
	return s
}

// Exec runs a statement on q's database, {jobs} and {failed} naming its
// tables.
func Exec(t testing.TB, q *database.Queue, query string, args ...any) {
	t.Helper()
	query = strings.NewReplacer("{jobs}", q.Dialect().Quote(q.Config().JobsTable), "{failed}", q.Dialect().Quote(q.Config().FailedTable)).Replace(query)
	if _, err := q.DB().Exec(q.Dialect().Rebind(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
