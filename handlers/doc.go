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
package handlers
