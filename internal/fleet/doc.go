// Package fleet is the little shared state laraworker keeps beside
// Laravel's queue tables, in its own tables of the app's database
// (never in Laravel's):
//
//   - laraworker_workers: one row per worker process (Go workers write
//     theirs with Heartbeat, in the wake-up of a claim once 5 s have
//     passed; a PHP bridge may write rows of kind "php"), refreshed every
//     few seconds, so a dashboard sees the fleet;
//   - laraworker_pauses: pause requests per worker or per queue, which
//     every Go worker reads when it claims (Heartbeat.ReadPausesSoon) and
//     applies within seconds;
//   - laraworker_history: jobs done, failed and released per minute,
//     queue and class, as the workers report them (kept 25 hours).
//
// CreateTables makes them (`laraworker tables`); Heartbeat runs in a Go
// worker; Store reads and writes them for the dashboard.
package fleet
