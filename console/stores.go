package console

import (
	"github.com/laraworker/laraworker/dashboard"
	"github.com/laraworker/laraworker/dbqueue"
	"github.com/laraworker/laraworker/fleet"
)

// fleetStore is laraworker's own tables on the queue's database, behind
// the connection's table prefix.
func fleetStore(q *dbqueue.Queue) *fleet.Store {
	return fleet.On(q.DB(), q.Dialect(), q.Config().TablePrefix)
}

// dashboardTables are the queue's tables as the dashboard reads them.
func dashboardTables(q *dbqueue.Queue) dashboard.Tables {
	cfg := q.Config()
	return dashboard.Tables{DB: q.DB(), Dialect: q.Dialect(), Jobs: cfg.JobsTable, Failed: cfg.FailedTable,
		Location: cfg.Location(), RetryAfter: q.RetryAfter()}
}
