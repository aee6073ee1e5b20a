// Package httpguard is what the dashboard and the metrics and pprof
// servers share to face a network: a limiter of credential guesses, the
// trusted-proxy rules (client address, scheme, host), the localhost Host
// check against DNS rebinding, and an http.Server with bounded headers
// and timeouts.
package httpguard
