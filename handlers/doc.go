// Package handlers maps Laravel job classes (payload displayName) to Go
// code, net/http style: a Handler runs one job, Middleware wraps Handlers,
// and a Registry routes by class name.
//
// A registration may also declare what the PHP class is beyond its
// properties, which no payload of every Laravel version carries: that it
// is ShouldBeUnique (and its uniqueId()), that it deletes when models are
// missing, and the tables of the models it holds (Options: ShouldBeUnique,
// ShouldBeUniqueUntilProcessing, UniqueVia, DeleteWhenMissingModels,
// Models). The worker acts on them as Laravel's CallQueuedHandler does.
//
// It may also declare the class's job middleware, Laravel's own
// (WithoutOverlapping, RateLimited, RateLimitedWithRedis,
// ThrottlesExceptions, ThrottlesExceptionsWithRedis, SkipIfBatchCancelled,
// with the options of their fluent methods: ReleaseAfter, DontRelease,
// ExpireAfter, Shared, WithPrefix, By, ByJob, Backoff, Connection). The
// worker applies them around the handler with Laravel's semantics and
// Laravel's keys, in the app's cache store or Redis connection, so a class
// that runs on PHP and Go workers at once holds one overlap lock and one
// rate limit across both. A job whose payload carries the bridge's record
// of its middleware runs through that record instead. Middleware (the
// net/http-shaped Middleware type, Registry.Use) wraps every handler in Go
// code and shares nothing with PHP.
package handlers
