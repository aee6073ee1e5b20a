package snapshot

import (
	"testing"

	"github.com/laraworker/laraworker/internal/dashboard/internal/testdash"
	"github.com/laraworker/laraworker/store/database"
	"github.com/rs/zerolog"
)

var (
	fixture = testdash.Fixture
	execSQL = testdash.Exec
)

// newTestSnapshot is a snapshot of q's tables, with laraworker's tables
// under a fresh prefix.
func newTestSnapshot(t testing.TB, q *database.Queue) *Snapshot {
	t.Helper()
	s, err := New(Config{Tables: tablesOf(q), Fleet: testdash.Fleet(t, q), Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sqlSource is s's jobs table source, for its budget.
func sqlSource(s *Snapshot) *sqlJobs { return s.jobs.(*sqlJobs) }

// tablesOf are q's tables as the snapshot reads them.
func tablesOf(q *database.Queue) Tables {
	cfg := q.Config()
	return Tables{DB: q.DB(), Dialect: q.Dialect(), Jobs: cfg.JobsTable, Failed: cfg.FailedTable, Location: cfg.Location(), RetryAfter: q.RetryAfter()}
}
