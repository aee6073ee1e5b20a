// Package longwait raises an alert when a queue's oldest ready job has
// waited longer than its threshold, on the database queue as on Redis:
// once per crossing (not once per check, as Horizon's LongWaitDetected
// fires every minute), and a clearance when the wait drops back. Alerts go
// to the log, to Prometheus gauges and, when configured, to a
// Slack-compatible webhook.
//
// Thresholds are per "connection:queue", in Horizon's `waits` shape (a
// missing queue waits 60 s, 0 turns the check off); they come from flags,
// a file, or the app's config('horizon.waits').
//
// The wait is measured, not estimated: the age of the oldest ready job
// (how long it has been available), which counts every worker's capacity,
// PHP's and Go's alike. Beside it the monitor reports what Horizon's
// WaitTimeCalculator estimates (ready jobs × their mean runtime ÷ the
// processes serving the queue) with Go's workers counted: the fleet's
// live workers on the queue, each Go worker by its concurrency.
package longwait
