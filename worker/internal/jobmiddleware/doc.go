// Package jobmiddleware runs Laravel's job middleware in Go.
//
// Laravel's job middleware (WithoutOverlapping, RateLimited,
// ThrottlesExceptions, their ...WithRedis variants, Skip,
// SkipIfBatchCancelled, Release) run around the handler, in the order
// CallQueuedHandler runs them, with their state where PHP keeps it: so
// while a class runs on PHP and Go workers, both take one overlap lock and
// count in one rate limit. Which middleware a job has comes from its
// payload, where the bridge records it at dispatch (bridgeproto.Metadata),
// else from its registration (handlers.WithoutOverlapping, ...).
//
// Middleware that is PHP code (a custom class, a closure, a callback), or
// whose state lives where Go cannot reach it (a file or memcached store, a
// Redis connection Go was not given), cannot run in Go; running the job
// without it would break what it guarantees (the job would overlap, or
// exceed its limit). Such a job is given back to PHP workers untouched, as
// for a configuration problem (the class is not claimed for a minute, the
// problem is logged, counted and shown by Health), unless the class is
// listed in the worker's Config.RunWithoutPHPMiddleware: Go then applies what it can
// and logs, on each job, what it did not.
//
// A Resolver decides what a job runs through (a Plan: plan.go from the
// bridge's record, declared.go from a registration, with the keys of
// keys.go); Through runs a job's handler inside it (apply.go), with
// Laravel's RateLimiter on the cache store (ratelimiter.go).
package jobmiddleware
