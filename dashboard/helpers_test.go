package dashboard

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/dbqueue"
	"github.com/laraworker/laraworker/fleet"
	"github.com/laraworker/laraworker/internal/testdsn"
	"github.com/laraworker/laraworker/payload"
	"github.com/rs/zerolog"
)

// fixture is a payload the Laravel 8 test app wrote, with a fresh uuid
// and, when class is given, another class name.
func fixture(t testing.TB, name, class string) []byte {
	t.Helper()
	raw, err := os.ReadFile("../testdata/payloads/" + name + ".json")
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

// fleetFor creates laraworker's tables under a fresh prefix.
func fleetFor(t testing.TB, q *dbqueue.Queue) *fleet.Store {
	t.Helper()
	s := fleet.NewStore(q.DB(), q.Dialect(), fleet.TablesWithPrefix("lw_"+testdsn.Suffix(t)+"_"))
	if err := s.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DropTables(context.Background()) })
	return s
}

func newTestSnapshot(t testing.TB, q *dbqueue.Queue) *Snapshot {
	t.Helper()
	return NewSnapshot(tablesOf(q), fleetFor(t, q), zerolog.Nop(), nil)
}

func execSQL(t testing.TB, q *dbqueue.Queue, query string, args ...any) {
	t.Helper()
	query = strings.NewReplacer("{jobs}", q.Dialect().Quote(q.Config().JobsTable), "{failed}", q.Dialect().Quote(q.Config().FailedTable)).Replace(query)
	if _, err := q.DB().Exec(q.Dialect().Rebind(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// tablesOf are q's tables as the dashboard reads them.
func tablesOf(q *dbqueue.Queue) Tables {
	cfg := q.Config()
	return Tables{DB: q.DB(), Dialect: q.Dialect(), Jobs: cfg.JobsTable, Failed: cfg.FailedTable, Location: cfg.Location(), RetryAfter: q.RetryAfter()}
}
