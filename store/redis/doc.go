// Package redis is Laravel's Redis queue as a jobqueue.Store: the
// worker runs on it as on the database queue, without knowing which one
// it runs. The jobs live in Redis, with Laravel's keys and scripts
// (package internal/redisproto); what Laravel keeps in the database
// whatever the queue driver (failed_jobs, job_batches, the bridge's hook
// jobs, and the cache store when it is "database") goes through a
// jobqueue.Repository on the app's database, which the caller opens
// (package store/database's Queue) and passes in: this package imports no
// other store. A redis cache store (the queue:restart signal and the
// maxExceptions counters, package rediscache) and its locks (package
// redislock) are passed to New, or opened by Open from the app's config.
//
// # Jobs
//
// A claimed job's JobRow carries the member its pop put in the reserved
// set in Reservation (the fence of every write about it), the payload as
// it was in the list, and an ID numbered by the store, unique among the
// jobs it handed out (Redis jobs have no integer id). ReservedAt is the
// Unix second of the pop or of the last Extend, for display.
//
// A claim pops the queues in order and takes jobs from the first that
// has any; with block_for, when all are empty, it blocks on the first
// queue only, as Laravel 11.27+ does (block_for 0, "forever" in Laravel,
// blocks 5 s at a time, so that delayed jobs are migrated and
// queue:restart is seen). At a job the worker does not run (a class it
// has no handler for, the claim's DisplayNames; one it gave back to PHP,
// ExcludeIDs, which the store maps to the jobs' payload ids) the pop
// leaves it where it is, untouched, and takes the worker's jobs from
// behind it, looking up to redisproto.DefaultLookahead jobs past the
// head; the store logs each class it leaves once per queue (how many, the
// fix), counts the jobs left once each and exports what the last claim on
// each queue left (Collector, LeftNow). When the lookahead finds nothing
// of the worker's, CountClaimable counts zero for that queue, so the
// worker sleeps instead of spinning. A job byte-for-byte identical to one
// reserved now (a payload pushed twice) is left in place in the same way
// until that reservation is gone (the two would share one reserved
// member); it is counted with reason copy.
//
// A claim whose answer is lost (the connection breaks after Redis ran the
// pop) leaves the jobs it reserved in the reserved set, known to nobody:
// they come back after retry_after with one attempt counted, as a PHP
// worker's do after the same fault (with --tries 1 such a job then fails
// as attempted too many times, in PHP as here). Finding them again would
// take a receipt written by every pop (the members it reserved, under a
// key of the claim's own, read back after the fault): one more write per
// claim, in keys Laravel does not have. Not done.
//
// # Outcomes
//
// Delete, Release, Unreserve and Extend are internal/redisproto's fenced scripts.
// Finish deletes the job and pushes its chain's next link in one script
// (on a cluster whose link goes to another slot: Laravel's order, push
// then delete, after an Extend, with the link taken back if the delete
// finds the reservation lost), then records the batch's success in the
// database. Fail extends the reservation (a lost one writes nothing),
// writes the failed_jobs row, deletes the job (when that finds the
// reservation lost, the failed row is deleted again) and then records the
// batch's failure. The batch counters come after the job is gone from
// Redis, so a job another worker holds never counts; a worker killed
// between the two leaves the batch one count short, as a PHP worker
// killed between its delete and its batch update does.
//
// The bridge's hook jobs (Followup.Hooks) go onto a database queue (the
// repository's hooks queue, database.Options.HooksQueue), written
// in the database transactions above: a success's batch callbacks job
// with its batch update; a failure's RunFailureHooks with its failed row,
// parked (available only after retry_after), then rewritten with the
// batch callbacks and made available in the transaction of the batch
// update, once the job is gone from Redis (deleted with the failed row
// when the delete finds the reservation lost). A worker killed between
// the two leaves the hook job parked: it runs after retry_after, without
// the batch callbacks whose counters were not written either, so a hook
// is neither lost nor run twice.
//
// A write whose answer was lost (a connection cut) is retried by the
// worker; the store remembers which writes may have landed, and a retry
// that then finds the member gone while the reservation was still valid
// (only a pop of an expired member takes it away) counts as its own
// earlier write rather than a lost reservation. Failed rows are looked up
// before they are written again. Clocks must agree, as between PHP
// servers.
package redis
