// Package snapshot is the dashboard's background reader: it keeps a
// bounded in-memory picture of one Laravel queue connection (its pending
// jobs, failed_jobs and laraworker's fleet tables) and publishes a Summary
// after each refresh, which pages read without touching the queue.
//
// The pending jobs come from a JobSource: the jobs table of a database
// queue (SQLJobs, built in: bounded statements by primary key and
// Laravel's queue index, never a table scan), or a Redis queue (package
// redisjobs: counts of each queue's list and sorted sets and the first
// jobs of each, never a whole list). Failed jobs are always in the app's
// database (failed_jobs), and so are the fleet's tables, whatever the
// queue's driver.
//
// A refresh's reads are bounded, whatever the size of the queue, and the
// reader waits nine times as long as its last refresh took: it keeps the
// queue's server busy at most a tenth of the time.
package snapshot
