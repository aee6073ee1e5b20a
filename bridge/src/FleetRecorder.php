<?php

namespace Laraworker\Bridge;

use Illuminate\Contracts\Foundation\Application;
use Illuminate\Database\Query\Expression;
use Illuminate\Queue\Events\JobExceptionOccurred;
use Illuminate\Queue\Events\JobFailed;
use Illuminate\Queue\Events\JobProcessed;
use Illuminate\Queue\Events\JobProcessing;
use Illuminate\Queue\Events\Looping;
use Illuminate\Queue\Events\WorkerStopping;
use Throwable;

/**
 * Records a `php artisan queue:work` process in laraworker's tables, so the
 * laraworker dashboard lists it beside the Go workers: its row in
 * laraworker_workers (kind "php"), its jobs per minute, queue and class
 * in laraworker_history with their runtimes and waits (in laraworker's
 * fixed buckets), and its last jobs in laraworker_recent.
 *
 * It starts on the worker's first Looping event, and only when the queue
 * connection uses the database driver and laraworker_workers exists on its
 * database connection (`laraworker tables`); otherwise it stays silent and
 * does nothing. It writes at most every 5 seconds, never per job: counts
 * are kept in memory and flushed with the heartbeat. A failing write is
 * logged once; after 3 failures in a row the recorder turns itself off.
 * The worker itself is never slowed down by more than those writes, nor
 * stopped by them.
 */
class FleetRecorder
{
    /** Seconds between two heartbeats. */
    private const EVERY = 5;

    /** Failed writes in a row after which the recorder gives up. */
    private const MAX_FAILURES = 3;

    /** Distinct (queue, class) pairs counted; past it, jobs count as "other". */
    private const MAX_CLASSES = 500;

    /** How long laraworker keeps history minutes and silent worker rows. */
    private const HISTORY_KEEP = 25 * 3600;

    private const WORKER_KEEP = 24 * 3600;

    private const PRUNE_EVERY = 600;

    /** How long laraworker keeps recent jobs, and how many per worker. */
    private const RECENT_KEEP = 24 * 3600;

    private const RECENT_PER_WORKER = 100;

    /**
     * The bounds (seconds) of laraworker's runtime and wait buckets and
     * their column suffixes, as package fleet (timing.go) names them: a
     * bucket counts the durations up to its bound, gt_1h those above.
     */
    private const BUCKETS = [
        '1ms' => 0.001, '2_5ms' => 0.0025, '5ms' => 0.005, '10ms' => 0.01, '25ms' => 0.025, '50ms' => 0.05,
        '100ms' => 0.1, '250ms' => 0.25, '500ms' => 0.5, '1s' => 1, '2_5s' => 2.5, '5s' => 5, '10s' => 10,
        '30s' => 30, '1m' => 60, '2m' => 120, '5m' => 300, '10m' => 600, '30m' => 1800, '1h' => 3600,
    ];

    /** @var Application */
    private $app;

    /** @var string|null "on" or "off" once the first Looping event decided */
    private $state;

    /** @var \Illuminate\Database\Connection */
    private $db;

    /** @var string the queue connection the worker serves */
    private $connection;

    /** @var string the worker's --name */
    private $name = 'default';

    /** @var array the laraworker_workers row, as last written */
    private $row = [];

    /** @var array<string, array> "minute|queue|class" => history row not written yet */
    private $counts = [];

    /** @var array<string, bool> (queue, class) pairs seen */
    private $pairs = [];

    /** @var array|null the job running now, as the row's running list holds it */
    private $running;

    /** @var float|null when the running job started (microtime) */
    private $startedAt;

    /** @var int|null the running job's available_at */
    private $availableAt;

    /** @var bool whether laraworker_history has the runtime and wait columns */
    private $timings = false;

    /** @var bool whether laraworker_recent exists */
    private $recentTable = false;

    /** @var array<int, array> slot => recent job not written yet */
    private $recent = [];

    /** @var int the next recent job's sequence number */
    private $recentNext = 0;

    /** @var bool whether a job started since the last Looping event */
    private $busy = false;

    /** @var int */
    private $lastBeat = 0;

    /** @var int */
    private $lastPrune = 0;

    /** @var int */
    private $failures = 0;

    /** @var bool */
    private $logged = false;

    public function __construct(Application $app)
    {
        $this->app = $app;
    }

    /**
     * The worker's --name, from the artisan command line (the events do not
     * carry it before Laravel 13).
     */
    public function commandStarting($input): void
    {
        $name = $input->getParameterOption('--name', null);
        if (is_string($name) && $name !== '') {
            $this->name = $name;
        }
    }

    /**
     * Before every pop. The first one starts the recorder; later ones beat
     * while the worker is idle (a busy worker beats when a job starts, so
     * the row can name the job it runs).
     */
    public function looping(Looping $event): void
    {
        if ($this->state === null) {
            $this->start($event->connectionName, (string) $event->queue);

            return;
        }
        if (! $this->busy) {
            $this->beatIfDue();
        }
        $this->busy = false;
    }

    public function jobProcessing(JobProcessing $event): void
    {
        if (! $this->records($event->connectionName)) {
            return;
        }
        $job = $event->job;
        $this->busy = true;
        $this->startedAt = microtime(true);
        $this->availableAt = self::availableAt($job);
        $this->running = [
            'id' => (int) $job->getJobId(),
            'uuid' => (string) $job->uuid(),
            'class' => self::clip($job->resolveName()),
            'queue' => self::clip((string) $job->getQueue()),
            'attempt' => (int) $job->attempts(),
            'since' => time(),
        ];
        $this->beatIfDue();
    }

    /**
     * The job returned: done, or released by itself. A job that failed
     * itself was counted by jobFailed.
     */
    public function jobProcessed(JobProcessed $event): void
    {
        if (! $this->records($event->connectionName)) {
            return;
        }
        $job = $event->job;
        if (! $job->hasFailed()) {
            $this->count($job, $job->isReleased() ? 'released' : 'done');
        }
        $this->running = null;
    }

    /**
     * The job threw: unless it failed (counted by jobFailed) or deleted
     * itself before it threw (nothing comes back: done), the worker
     * releases it right after this event, or it released itself.
     */
    public function jobExceptionOccurred(JobExceptionOccurred $event): void
    {
        if (! $this->records($event->connectionName)) {
            return;
        }
        $job = $event->job;
        if (! $job->hasFailed()) {
            $this->count($job, $job->isDeleted() ? 'done' : 'released');
        }
        $this->running = null;
    }

    public function jobFailed(JobFailed $event): void
    {
        // A Go worker's failure whose hooks this worker runs
        // (Jobs\RunFailureHooks) is not a failure of this worker.
        if ($event->job instanceof GoQueueJob) {
            return;
        }
        if ($this->records($event->connectionName)) {
            $this->count($event->job, 'failed');
        }
    }

    /**
     * The worker stops (also just before it kills itself on a timeout):
     * the last counts and stopped_at.
     */
    public function workerStopping(WorkerStopping $event): void
    {
        if ($this->state !== 'on') {
            return;
        }
        $this->running = null;
        $this->beat(time());
        $this->state = 'off';
    }

    /**
     * Decides once whether this worker is recorded, and writes its first
     * row so it is listed before its first job.
     */
    private function start(string $connection, string $queues): void
    {
        $this->state = 'off';
        try {
            $config = (array) $this->app['config']->get("queue.connections.{$connection}", []);
            if (($config['driver'] ?? null) !== 'database') {
                return;
            }
            $db = $this->app['db']->connection($config['connection'] ?? null);
            $schema = $db->getSchemaBuilder();
            if (! in_array($db->getDriverName(), ['mysql', 'mariadb', 'pgsql', 'sqlite'], true)
                || ! $schema->hasTable('laraworker_workers')) {
                return; // laraworker's tables are not there: nothing to record into
            }
            // Tables of an earlier laraworker lack these (`laraworker
            // tables` adds them): the counts are recorded without them.
            $this->timings = $schema->hasColumn('laraworker_history', 'run_le_1ms');
            $this->recentTable = $schema->hasTable('laraworker_recent');
        } catch (Throwable $e) {
            $this->report('checking for laraworker_workers', $e);

            return;
        }
        $this->db = $db;
        $this->connection = $connection;
        $this->state = 'on';
        $host = (string) gethostname();
        $pid = getmypid();
        $started = time();
        $this->row = [
            'id' => self::clip("php:{$host}:{$pid}:{$started}"),
            'kind' => 'php',
            'name' => self::clip($this->name, 255),
            'host' => self::clip($host, 255),
            'pid' => $pid,
            'queues' => self::json(explode(',', $queues)),
            'concurrency' => 1,
            'started_at' => $started,
            'last_seen_at' => $started,
            'stopped_at' => null,
            'jobs_done' => 0,
            'jobs_failed' => 0,
            'jobs_released' => 0,
            'memory_bytes' => 0,
            'paused' => 0,
            'paused_queues' => '[]',
            'running' => '[]',
            'version' => self::clip('Laravel '.$this->app->version(), 64),
        ];
        $this->beat(null);
    }

    /** Whether an event of this queue connection is to be recorded. */
    private function records($connection): bool
    {
        // A sync job dispatched from a job raises the same events, on the
        // "sync" connection: it is part of the job that runs, not a job of
        // this worker.
        return $this->state === 'on' && $connection === $this->connection;
    }

    private function count($job, string $outcome): void
    {
        $this->row['jobs_'.$outcome]++;
        $queue = self::clip((string) $job->getQueue());
        $name = self::clip($job->resolveName());
        $class = $name;
        if (! isset($this->pairs[$queue."\0".$class])) {
            if (count($this->pairs) >= self::MAX_CLASSES) {
                $class = 'other';
            }
            $this->pairs[$queue."\0".$class] = true;
        }
        $now = microtime(true);
        $minute = intdiv((int) $now, 60) * 60;
        $key = $minute."\0".$queue."\0".$class;
        if (! isset($this->counts[$key])) {
            $this->counts[$key] = ['minute' => $minute, 'queue' => $queue, 'class' => $class, 'done' => 0, 'failed' => 0, 'released' => 0]
                + ($this->timings ? self::emptyTimings() : []);
        }
        $this->counts[$key][$outcome]++;
        if ($this->startedAt === null) {
            return; // no JobProcessing before: no runtime
        }
        $run = max(0.0, $now - $this->startedAt);
        $wait = $this->availableAt === null ? 0.0 : max(0.0, $this->startedAt - $this->availableAt);
        if ($this->timings) {
            $this->observe($this->counts[$key], 'run', $run);
            $this->observe($this->counts[$key], 'wait', $wait);
        }
        $this->remember([
            'job_id' => (int) $job->getJobId(),
            'uuid' => self::clip((string) $job->uuid(), 64),
            'queue' => $queue,
            'class' => $name,
            'outcome' => $outcome,
            'attempt' => (int) $job->attempts(),
            'finished_at' => (int) $now,
            'run_ms' => (int) floor($run * 1000),
            'wait_ms' => (int) floor($wait * 1000),
        ]);
        $this->startedAt = null;
    }

    /** The runtime and wait columns of a history row, all 0. */
    private static function emptyTimings(): array
    {
        $row = [];
        foreach (['run', 'wait'] as $metric) {
            foreach (array_keys(self::BUCKETS) as $name) {
                $row["{$metric}_le_{$name}"] = 0;
            }
            $row["{$metric}_gt_1h"] = 0;
            $row["{$metric}_ms"] = 0;
        }

        return $row;
    }

    /** Counts one duration (seconds) in its bucket of metric. */
    private function observe(array &$row, string $metric, float $seconds): void
    {
        $column = "{$metric}_gt_1h";
        foreach (self::BUCKETS as $name => $bound) {
            if ($seconds <= $bound) {
                $column = "{$metric}_le_{$name}";
                break;
            }
        }
        $row[$column]++;
        $row["{$metric}_ms"] += (int) floor($seconds * 1000);
    }

    /** Keeps a finished job in the ring of the last RECENT_PER_WORKER. */
    private function remember(array $job): void
    {
        if (! $this->recentTable) {
            return;
        }
        $slot = $this->recentNext % self::RECENT_PER_WORKER;
        $this->recentNext++;
        $this->recent[$slot] = ['worker' => $this->row['id'], 'slot' => $slot] + $job;
    }

    /** The available_at of a database queue's job (null for others). */
    private static function availableAt($job): ?int
    {
        if (! method_exists($job, 'getJobRecord')) {
            return null;
        }
        $record = $job->getJobRecord();
        $at = $record->available_at ?? null;

        return is_numeric($at) ? (int) $at : null;
    }

    private function beatIfDue(): void
    {
        if (time() - $this->lastBeat >= self::EVERY) {
            $this->beat(null);
        }
    }

    /**
     * Writes the worker's row and the counts not written yet; stoppedAt
     * marks the last one.
     */
    private function beat(?int $stoppedAt): void
    {
        $now = time();
        $this->lastBeat = $now;
        $row = array_merge($this->row, [
            'last_seen_at' => $now,
            'stopped_at' => $stoppedAt,
            'memory_bytes' => memory_get_usage(true),
            'running' => self::json($this->running === null ? [] : [$this->running]),
        ]);
        $this->write('writing the worker\'s row', function () use ($row) {
            $this->db->table('laraworker_workers')->upsert($row, ['id'], array_keys(array_diff_key($row, ['id' => 0])));
        });
        $this->flushCounts();
        $this->flushRecent();
        if ($now - $this->lastPrune >= self::PRUNE_EVERY) {
            $this->lastPrune = $now;
            $this->write('pruning old rows', function () use ($now) {
                $this->db->table('laraworker_history')->where('minute', '<', $now - self::HISTORY_KEEP)->delete();
                $this->db->table('laraworker_workers')->where('last_seen_at', '<', $now - self::WORKER_KEEP)->delete();
                if ($this->recentTable) {
                    $this->db->table('laraworker_recent')->where('finished_at', '<', $now - self::RECENT_KEEP)->delete();
                }
            });
        }
    }

    /**
     * Adds the counts to laraworker_history in one statement; several
     * workers add to the same minute. Kept for the next beat if it fails.
     */
    private function flushCounts(): void
    {
        if ($this->counts === []) {
            return;
        }
        $rows = array_values($this->counts);
        $columns = array_keys(array_diff_key($rows[0], ['minute' => 0, 'queue' => 0, 'class' => 0]));
        if ($this->write('writing job history', function () use ($rows, $columns) {
            $this->db->table('laraworker_history')->upsert($rows, ['minute', 'queue', 'class'], $this->adding($columns));
        })) {
            $this->counts = [];
        }
    }

    /**
     * Writes the jobs finished since the last beat into this worker's ring
     * of laraworker_recent, each replacing its slot's row.
     */
    private function flushRecent(): void
    {
        if ($this->recent === []) {
            return;
        }
        $rows = array_values($this->recent);
        if ($this->write('writing recent jobs', function () use ($rows) {
            $this->db->table('laraworker_recent')->upsert($rows, ['worker', 'slot'],
                ['job_id', 'uuid', 'queue', 'class', 'outcome', 'attempt', 'finished_at', 'run_ms', 'wait_ms']);
        })) {
            $this->recent = [];
        }
    }

    /**
     * The upsert's update clause that adds the new counts to the stored
     * ones (Laravel's own upsert would replace them).
     *
     * @return array<string, Expression>
     */
    private function adding(array $columns): array
    {
        $grammar = $this->db->getQueryGrammar();
        $table = $grammar->wrapTable('laraworker_history'); // with the connection's table prefix
        $mysql = in_array($this->db->getDriverName(), ['mysql', 'mariadb'], true);
        $set = [];
        foreach ($columns as $column) {
            $c = $grammar->wrap($column);
            $set[$column] = new Expression($mysql ? "{$c} + values({$c})" : "{$table}.{$c} + excluded.{$c}");
        }

        return $set;
    }

    /**
     * Runs one write; a failure is logged once, and after MAX_FAILURES in a
     * row the recorder is turned off. Never throws.
     */
    private function write(string $what, callable $write): bool
    {
        if ($this->state !== 'on') {
            return false;
        }
        try {
            $write();
            $this->failures = 0;

            return true;
        } catch (Throwable $e) {
            $this->failures++;
            if (! $this->logged) {
                $this->logged = true;
                $this->report($what, $e);
            }
            if ($this->failures >= self::MAX_FAILURES) {
                $this->state = 'off';
                $this->log("laraworker: {$this->failures} writes to laraworker's tables failed in a row; this worker is no longer recorded in the dashboard (it goes on working).");
            }

            return false;
        }
    }

    private function report(string $what, Throwable $e): void
    {
        $this->log("laraworker: {$what} failed: ".get_class($e).': '.$e->getMessage().' (the worker goes on; run `laraworker tables` to create laraworker\'s tables)');
    }

    private function log(string $message): void
    {
        try {
            $this->app['log']->warning($message);
        } catch (Throwable $e) {
            // A broken logger must not stop the worker either.
        }
    }

    private static function json(array $value): string
    {
        return (string) json_encode($value, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE);
    }

    /** Cuts a name to what its column holds, on a character boundary. */
    private static function clip(string $value, int $bytes = 191): string
    {
        return strlen($value) <= $bytes ? $value : mb_strcut($value, 0, $bytes, 'UTF-8');
    }
}
