// Package horizon writes what Laravel Horizon's PHP listeners write
// in Redis when a PHP worker reserves, releases, finishes or fails a job,
// so that jobs a Go worker runs on a Horizon app's queues show in
// Horizon's dashboard as they would after `php artisan horizon`'s
// workers: their status, completed and failed lists, runtime and
// throughput metrics per job class and queue, monitored tags and the
// failed jobs' tags.
//
// The formats are Horizon 5.x's as of v5.29.1 (laravel/horizon, branch
// 5.x at d9c39ce): src/Repositories/RedisJobRepository.php (the job
// hashes and the recent, pending, completed, silenced, failed,
// recent_failed and monitored_jobs sorted sets, their expiry and
// trimming), src/Repositories/RedisMetricsRepository.php and
// src/LuaScripts.php (updateMetrics: the job:<class> and queue:<name>
// hashes, measured_jobs and measured_queues), src/Repositories/
// RedisTagRepository.php (monitoring, the tag sets, failed:<tag>), and the
// listeners src/EventMap.php wires to the queue's events
// (MarkJobAsReserved, StartTimingJob, MarkJobAsReleased,
// MarkJobsAsMigrated, MarkJobAsComplete, UpdateJobMetrics,
// MarshalFailedEvent, MarkJobAsFailed, StoreTagsForFailedJob, and the
// TrimRecentJobs, TrimFailedJobs and TrimMonitoredJobs of a running
// master supervisor).
//
// Every key is under Horizon's own prefix (config('horizon.prefix'),
// "horizon:" when empty), on the Redis connection config('horizon.use')
// names, as Horizon::use() sets it up. Times are PHP's
// str_replace(',', '.', microtime(true)) (a float written with PHP's
// precision of 14 digits), scores of the "newest first" sets its
// negative, expiries Carbon's now + minutes. Each write is what one PHP
// worker's listener sends for the same event, batched: a claim of 20 jobs
// is one pipeline of 20 HMSETs, a grouped delete one pipeline of what 20
// JobDeleted events write, and the metrics of one class in a batch are
// one run of a script that applies Horizon's running average job after
// job, which leaves the bytes 20 runs of updateMetrics leave.
//
// What Go cannot do as PHP does is named in docs/REDIS.md ("Horizon"): the
// runtime is measured from the pop to the delete as Horizon's stopwatch
// does, in the Go process; a job Go gives back untouched (Unreserved) has
// no Horizon counterpart and is marked pending again; the snapshots that
// `php artisan horizon:snapshot` takes are not written here.
//
// A Go worker is also listed in Horizon's process lists (processes.go,
// registration.go): a master record and one supervisor record, written as
// RedisMasterSupervisorRepository::update and RedisSupervisorRepository::
// update write them, so that Horizon's dashboard and commands count it
// and horizon:pause, continue and terminate signal it; the supervisor's
// command list (RedisHorizonCommandQueue) is applied to it. plan.go reads
// one supervisor of config('horizon.environments') as ProvisioningPlan
// does, for `work --horizon-supervisor`. docs/HORIZON.md says what a team
// sees and what changed after v5.29.1.
package horizon
