// Package bridgeproto is the Go side of the protocol between laraworker
// and its PHP bridge package (bridge/, described in bridge/PROTOCOL.md):
// the "laraworker" payload key the bridge records at dispatch (Metadata,
// ReadMetadata), the hook jobs a Go worker pushes for PHP to run what only
// PHP can (FailureHooksPayload, BatchCallbacksPayload), and which batch
// callbacks a Go worker's counter update triggers (AfterSuccess,
// AfterFailure).
//
// It depends on payload, phpserialize and internal/phparray only.
package bridgeproto
