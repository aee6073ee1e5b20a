// Package database is Laravel's database queue as a jobqueue.Store: it runs
// the statements Laravel's DatabaseQueue, DatabaseUuidFailedJobProvider and
// DatabaseBatchRepository run, on MySQL and MariaDB, PostgreSQL and SQLite,
// with the lock clause Laravel's getLockForPopping picks for the server's
// engine and version.
//
// A Queue is one queue connection. The worker's path (claim.go,
// claimindexed.go, delete.go, outcomes.go, push.go) is Claim, Delete, Finish, Release, Fail, Unreserve and Extend,
// with the chain's next link and the batch's counters written in the
// outcome's own transaction (batch.go). The admin side (admin.go,
// failed.go, move.go) is the `php artisan queue:*` commands: Sizes,
// Clear, Move, ListFailed, Retry, Forget, Flush, PruneFailed
// (jobqueue.Admin and jobqueue.FailedJobs), the tables' check and creation
// (jobqueue.Schema) and the classes on a queue. A Queue is also the
// jobqueue.Repository a store whose jobs live elsewhere (package
// store/redis) keeps its failed jobs, batches and hook jobs in: opened on
// the app's database under that store's connection name, it writes what
// follows that store's outcomes (RecordFailed, RecordBatchSuccess, ...).
// The app's database cache store
// and its locks come from package dbcache; connections, dialects and
// retried transactions from package sqldb. Every statement comes from
// the catalogue in store/database/internal/sqlstmt; per engine, they are listed
// in SQL.md, which is generated from that code.
package database
