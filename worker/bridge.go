package worker

import "github.com/laraworker/laraworker/worker/internal/bridgehooks"

// Bridge is what the app's laraworker bridge does: with it, what only PHP
// can run after a job Go ran (failed(), JobFailed listeners, a chain's
// catch callbacks, batch callbacks) runs in PHP from hook jobs the worker
// writes with each outcome (Config.Bridge).
type Bridge = bridgehooks.Bridge
