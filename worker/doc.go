// Package worker runs Laravel queue jobs with Go handlers, as `php artisan
// queue:work` runs them with PHP: it claims jobs from a jobqueue.Store
// (Laravel's database queue: *dbqueue.Queue), routes each on its payload's
// displayName to a handler of a handlers.Registry, applies Laravel's
// attempt, backoff, timeout and failure rules, and writes each outcome
// back as Laravel would, so PHP workers and `php artisan queue:*`
// commands keep working on the same tables.
//
// Build a Worker with New from a Store, a Registry and a Config (its zero
// value is artisan's defaults), then call Run once.
//
// One job's path reads in three files: producer.go claims rows and
// dispatches each to an executor of its own, executor.go runs the job to
// its outcome with Laravel's rules (the rules themselves are in rules.go,
// the unique locks in unique.go, chains and batches in chain.go and
// batches.go), completer.go writes the outcome.
package worker
