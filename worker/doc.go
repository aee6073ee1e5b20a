// Package worker runs Laravel queue jobs with Go handlers, as `php artisan
// queue:work` runs them with PHP: it claims jobs from a jobqueue.Store
// (Laravel's database queue, package store/database, or its Redis queue,
// package store/redis), routes each on its payload's displayName to a
// handler of a handlers.Registry, applies Laravel's attempt, backoff,
// timeout and failure rules, and writes each outcome back as Laravel
// would, so PHP workers and `php artisan queue:*` commands keep working
// on the same queues.
//
// Build a Worker with New from a Store, a Registry and a Config (its zero
// value is artisan's defaults), then call Run once.
//
// One job's path reads in three files: producer.go claims rows and
// dispatches each to an executor of its own, executor.go runs the job to
// its outcome with Laravel's rules (the rules themselves are in rules.go,
// chains in chain.go, the job middleware's side in middleware_job.go),
// completer.go writes the outcome.
//
// What Laravel does around a job, and does not depend on the run loop,
// is in packages of its own under worker/internal: jobmiddleware (the job
// middleware: WithoutOverlapping, RateLimited, ThrottlesExceptions...),
// uniquelock (ShouldBeUnique locks), phpexception (the exception texts of
// failed_jobs), maxexceptions (maxExceptions counters), batchlookup
// (batch options), bridgehooks (the bridge's hook jobs), configproblem
// (configuration problems, as Health reports them) and onceset (what is
// logged once).
package worker
