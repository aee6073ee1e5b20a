package bridgeproto

import "slices"

// The bridge's capabilities (LaraworkerServiceProvider::CAPABILITIES):
// what the installed bridge, with a laraworker that supports it, does
// beyond routing classes to Go's queue. A Go worker acts on the ones it
// finds, so a bridge that predates one is never asked for it.
const (
	// CapFailed: when Go fails a job, a RunFailureHooks job runs the
	// class's failed() in PHP and fires JobFailed there.
	CapFailed = "failed"
	// CapBatchCallbacks: batch then/catch/finally (and progress, failure)
	// callbacks run in PHP (RunBatchCallbacks, or RunFailureHooks after a
	// failure) when a Go success or failure triggers them, so members of
	// batches with callbacks run in Go.
	CapBatchCallbacks = "batch-callbacks"
	// CapChainCatch: a failed chain link's catch callbacks run in PHP
	// (RunFailureHooks).
	CapChainCatch = "chain-catch"
	// CapMiddleware: the standard job middleware is recorded in the
	// payload at dispatch, for Go to apply.
	CapMiddleware = "middleware"
	// CapUnique: ShouldBeUnique classes are routed, their lock's key,
	// store, owner and kind recorded in the payload, and Go releases it.
	CapUnique = "unique"
	// CapModels: the models' tables and deleteWhenMissingModels are
	// recorded in the payload, and Go checks them before a run.
	CapModels = "models"
	// CapRecordAll: the record (unique lock, models, middleware) goes on
	// every queued job, routed or not, unless config/laraworker.php says
	// 'record' => 'routed' (appconfig.BridgeConfig.RecordsAll): a class
	// routed to Go by `work --route` carries it too.
	CapRecordAll = "record-all"
)

// HasCapability reports whether capabilities (the bridge's list) holds c.
func HasCapability(capabilities []string, c string) bool {
	return slices.Contains(capabilities, c)
}

// Bridge is what the app's laraworker bridge does: with it, what only PHP
// can run after a job Go ran (failed(), JobFailed listeners, a chain's
// catch callbacks, batch callbacks) runs in PHP from hook jobs the worker
// writes with each outcome (worker.Config.Bridge).
type Bridge struct {
	// Capabilities are LaraworkerServiceProvider::CAPABILITIES: what the
	// installed bridge, with a worker that supports it, does (CapFailed,
	// CapBatchCallbacks, CapChainCatch, CapUnique, CapModels,
	// CapMiddleware).
	Capabilities []string
}

// Has reports whether the bridge does capability; a nil Bridge (none
// installed) does nothing.
func (b *Bridge) Has(capability string) bool {
	return b != nil && HasCapability(b.Capabilities, capability)
}
