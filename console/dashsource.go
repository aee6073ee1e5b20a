package console

import (
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/internal/dashboard/redisjobs"
	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
)

// The dashboard's and the long-wait monitor's reads of a queue
// connection, built here from what the connection says of itself
// (queueconn names no dashboard package).

// queueTables are the connection's tables as the snapshot reads them:
// failed_jobs, and the jobs table of a database queue.
func queueTables(own *queueconn.QueueDatabase) snapshot.Tables {
	return snapshot.Tables{DB: own.DB, Dialect: own.Dialect, Jobs: own.JobsTable, Failed: own.FailedTable,
		Location: own.Location, RetryAfter: own.RetryAfter}
}

// jobSource reads the pending jobs of a queue that has no jobs table (a
// Redis queue), watching the connection's default queue and queues; nil:
// the snapshot reads the jobs table.
func jobSource(conn *queueconn.Connection, queues []string) snapshot.JobSource {
	if conn.Redis == nil {
		return nil
	}
	watched := append([]string{conn.Redis.Config().Queue}, queues...)
	return redisjobs.New(conn.Redis, redisjobs.Options{Queues: watched})
}
