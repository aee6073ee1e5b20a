// Package pulse records, for the jobs a Go worker runs, what Laravel
// Pulse's Queues and Slow Jobs recorders record for the jobs PHP runs, in
// the same place: Pulse's tables (pulse_entries, pulse_aggregates) through
// the storage ingest, or the Redis stream `pulse:work` digests. So Pulse's
// Queues and Slow Jobs cards count Go's work with PHP's.
//
// What is recorded follows Pulse 1.x (laravel/pulse src/Recorders/
// {Queues,SlowJobs}.php, src/Storage/DatabaseStorage.php,
// src/Ingests/RedisIngest.php):
//
//   - Queues: a count, bucketed only (no pulse_entries row), of type
//     processing, processed, released or failed per "<connection>:<queue>"
//     for each of Laravel's events a run raises (worker.JobEvents), kept
//     or dropped per job by Pulse's deterministic sample on the uuid.
//   - SlowJobs: for a run that took at least the threshold (per job name
//     pattern, or one number), a slow_job entry keyed by the job's name with
//     the duration in ms, and its max and count aggregates, randomly
//     sampled.
//
// Entries are buffered and ingested in batches (a second apart, sooner
// when pulse.ingest.buffer is reached, and when the worker stops), as one
// transaction per batch with Pulse's pre-aggregation and upserts per
// engine, or one pipeline of XADDs. Pulse's trim lottery runs after each
// batch, as it does after each ingest in PHP.
package pulse
