// Package worker runs Laravel queue jobs with Go handlers, as `php artisan
// queue:work` runs them with PHP: it claims jobs from a Store (Laravel's
// database queue: *dbqueue.Queue), routes each on its payload's
// displayName to a handler of a handlers.Registry, applies Laravel's
// attempt, backoff, timeout and failure rules, and writes each outcome
// back as Laravel would, so PHP workers and `php artisan queue:*`
// commands keep working on the same tables.
//
// Build a Worker with New from a Store, a Registry and a Config (its zero
// value is artisan's defaults), then call Run once.
package worker
