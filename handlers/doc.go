// Package handlers maps Laravel job classes (payload displayName) to Go
// code, net/http style: a Handler runs one job, Middleware wraps Handlers,
// and a Registry routes by class name.
package handlers
