// Package laravel speaks Laravel's database queue protocol on MySQL and
// MariaDB, PostgreSQL and SQLite: it reads the app's configuration (.env,
// DB_URL), opens the database as Laravel's connectors do, and runs the
// statements Laravel's DatabaseQueue, DatabaseUuidFailedJobProvider,
// DatabaseBatchRepository and DatabaseStore run, with the lock clause
// Laravel's getLockForPopping picks for the server's engine and version.
//
// A Queue is one queue connection: Claim, Delete, Release, Fail,
// Unreserve and Extend are what a worker needs (it implements
// worker.Store); Push and PushMany add jobs; Sizes, ListFailed, Retry,
// Forget, Flush, PruneFailed and Clear are the `php artisan queue:*`
// commands; FindBatch and RecordBatch* are the batch repository; Cache is
// the app's database cache store. Every statement, per engine, is listed
// in SQL.md, which is generated from this package's code.
package laravel
