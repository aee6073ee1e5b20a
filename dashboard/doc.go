// Package dashboard serves laraworker's web dashboard on Laravel's queue
// tables: queues and their wait, the fleet of workers, running, pending
// and failed jobs, retry and forget as queue:retry and queue:forget do,
// and pause and resume of Go workers through the fleet's tables.
//
// Pages read a Snapshot (incremental caches refreshed in the background
// within a time budget) and fetch rows only by primary key, so a page
// costs the same with 100 or 1,000,000 jobs.
package dashboard
