// Package dashboard serves laraworker's web dashboard on a Laravel queue
// connection (database or redis): queues and their wait, the fleet of
// workers, running, pending and failed jobs, retry and forget as
// queue:retry and queue:forget do, batches, and pause and resume of Go
// workers through the fleet's tables.
//
// Pages read a snapshot.Snapshot (package dashboard/snapshot: caches
// refreshed in the background within a time budget, the pending jobs
// through a snapshot.JobSource) and fetch rows only by primary key or a
// bounded read, so a page costs the same with 100 or 1,000,000 jobs. A
// Redis queue's jobs come from package dashboard/redisjobs
// (Options.Jobs).
package dashboard
