package dashboard

import (
	"github.com/laraworker/laraworker/internal/dashboard/internal/testdash"
	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/store/database"
)

var (
	fixture  = testdash.Fixture
	fleetFor = testdash.Fleet
	execSQL  = testdash.Exec
)

// tablesOf are q's tables as the dashboard reads them.
func tablesOf(q *database.Queue) snapshot.Tables {
	cfg := q.Config()
	return snapshot.Tables{DB: q.DB(), Dialect: q.Dialect(), Jobs: cfg.JobsTable, Failed: cfg.FailedTable, Location: cfg.Location(), RetryAfter: q.RetryAfter()}
}
