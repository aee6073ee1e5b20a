<?php

namespace App\Support;

use App\Jobs\Hooks\EpisodeImportJob;
use App\Jobs\Hooks\FlakyFeedJob;
use App\Jobs\Hooks\HookedEncryptedJob;
use App\Jobs\Hooks\HookedJob;
use App\Jobs\Hooks\LimitedJob;
use App\Jobs\Hooks\MixedMiddlewareJob;
use App\Jobs\Hooks\OverlapJob;
use App\Jobs\Hooks\PodcastSyncJob;
use App\Jobs\Hooks\RedisLimitedJob;
use App\Jobs\Hooks\ThrottledJob;
use App\Jobs\Hooks\UntilProcessingJob;
use App\Models\Podcast;
use Illuminate\Bus\Batch;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Support\Facades\Bus;
use Illuminate\Support\Facades\Queue;
use Laraworker\Bridge\Jobs\RunBatchCallbacks;
use Laraworker\Bridge\Jobs\RunFailureHooks;
use Throwable;

/**
 * The kinds `php artisan app:hooks <kind>` dispatches. Each returns a short
 * description (batches: "batch <id>").
 */
class HookKinds
{
    /**
     * @return array<string, callable(): string>
     */
    public static function all(): array
    {
        return [
            'overlap' => fn () => self::job((new OverlapJob(7))->through([(new WithoutOverlapping('prop'))->dontRelease()])),
            'limited' => fn () => self::job(new LimitedJob(7)),
            'throttled-by' => fn () => self::job(new ThrottledJob('by')),
            'throttled-job' => fn () => self::job(new ThrottledJob('job')),
            'throttled-class' => fn () => self::job(new ThrottledJob('class')),
            'throttled-when' => fn () => self::job(new ThrottledJob('when')),
            'redis-limited' => fn () => self::job(new RedisLimitedJob(7)),
            'mixed' => fn () => self::job(new MixedMiddlewareJob),
            'until-processing' => fn () => self::job(new UntilProcessingJob('feed-9')),
            'hooked' => fn () => self::job(new HookedJob('plain')),
            'hooked-model' => fn () => self::job(new HookedJob('with model', Podcast::query()->firstOrCreate(['id' => 55], ['title' => 'Hooked']))),
            'hooked-encrypted' => fn () => self::job(new HookedEncryptedJob('encrypted')),
            'hooked-chain' => fn () => self::chain(),
            'hooked-batch' => fn () => self::batch(),
            // Many jobs for the tests of the Go worker's hooks: every third
            // is labelled "fail" (a route can fail those alone).
            'hooked-many' => fn () => self::many(),
            'hooked-batch-many' => fn () => self::batchMany(),
            // Twelve PodcastSyncJobs, six per podcast (1, 2), half of them on
            // PHP's queue (an explicit onQueue() wins over the bridge's route).
            'podcast-sync' => fn () => self::podcastSync(),
            // EpisodeImportJobs on podcasts 1-3: a batch of 4 that all
            // succeed, a batch of 6 (allowFailures) of which 2 fail, both
            // routed by the bridge, and 4 (1 failing) on PHP's queue, as
            // jobs queued before the class moved would be.
            'episode-import' => fn () => self::episodeImport(),
            // Six FlakyFeedJobs, three routed, three on PHP's queue.
            'flaky-feed' => fn () => self::onBothQueues(6, fn () => new FlakyFeedJob),
            // The bridge's hook jobs as PHP itself queues them, for a
            // byte-for-byte comparison with the ones Go builds.
            'php-failure-hooks' => fn () => self::pushed(new RunFailureHooks('{"uuid":"u-1"}', 'database', 'go', 12, 3,
                'Illuminate\\Queue\\MaxAttemptsExceededException', 'Ünïcode "quoted" / slash', ['catch', 'finally'])),
            'php-batch-callbacks' => fn () => self::pushed(new RunBatchCallbacks('9a1c', ['then', 'finally'])),
        ];
    }

    /** @return list<HookedJob> */
    private static function manyJobs(int $n): array
    {
        $jobs = [];
        for ($i = 1; $i <= $n; $i++) {
            $jobs[] = new HookedJob($i % 3 === 0 ? 'fail' : 'ok '.$i);
        }

        return $jobs;
    }

    private static function many(): string
    {
        foreach (self::manyJobs(30) as $job) {
            dispatch($job);
        }

        return '30 '.HookedJob::class;
    }

    // 24 members, every third labelled "fail", with then/catch/finally.
    private static function batchMany(): string
    {
        $batch = Bus::batch(self::manyJobs(24))
            ->name('hooked-batch-many')
            ->allowFailures()
            ->then(function (Batch $batch) {
                RunRecorder::record(null, 'batch:then', ['batchId' => $batch->id]);
            })
            ->catch(function (Batch $batch, Throwable $e) {
                RunRecorder::record(null, 'batch:catch', ['batchId' => $batch->id, 'exception' => get_class($e)]);
            })
            ->finally(function (Batch $batch) {
                RunRecorder::record(null, 'batch:finally', ['batchId' => $batch->id, 'pending' => $batch->pendingJobs, 'failed' => $batch->failedJobs]);
            })
            ->dispatch();

        return 'batch '.$batch->id;
    }

    private static function pushed(object $job): string
    {
        Queue::pushOn('php-built', $job);

        return get_class($job);
    }

    private static function podcastSync(): string
    {
        $podcasts = [1 => null, 2 => null];
        foreach (array_keys($podcasts) as $id) {
            $podcasts[$id] = Podcast::query()->firstOrCreate(['id' => $id], ['title' => "Podcast {$id}"]);
        }

        return self::onBothQueues(12, fn (int $i) => new PodcastSyncJob($podcasts[1 + $i % 2]));
    }

    // Every other pair of jobs goes to PHP's "default" queue, the others
    // where the bridge routes them.
    private static function onBothQueues(int $n, callable $make): string
    {
        for ($i = 0; $i < $n; $i++) {
            $job = $make($i);
            if (intdiv($i, 2) % 2 === 1) {
                $job->onQueue('default');
            }
            dispatch($job);
        }

        return "{$n} jobs";
    }

    private static function job(object $job): string
    {
        dispatch($job);

        return get_class($job);
    }

    // Two links with a catch callback: the first link is the one the test fails.
    private static function chain(): string
    {
        Bus::chain([new HookedJob('link 1'), new HookedJob('link 2')])
            ->catch(function (Throwable $e) {
                RunRecorder::record(null, 'chain:catch', ['exception' => get_class($e), 'message' => $e->getMessage()]);
            })
            ->dispatch();

        return 'chain of 2 '.HookedJob::class;
    }

    // Three members with then/catch/finally; allowFailures so a failure
    // does not cancel it.
    private static function batch(): string
    {
        $batch = Bus::batch([new HookedJob('member 1'), new HookedJob('member 2'), new HookedJob('member 3')])
            ->name('hooked-batch')
            ->allowFailures()
            ->then(function (Batch $batch) {
                RunRecorder::record(null, 'batch:then', ['batchId' => $batch->id, 'pending' => $batch->pendingJobs, 'failed' => $batch->failedJobs]);
            })
            ->catch(function (Batch $batch, Throwable $e) {
                RunRecorder::record(null, 'batch:catch', ['batchId' => $batch->id, 'exception' => get_class($e), 'message' => $e->getMessage()]);
            })
            ->finally(function (Batch $batch, ?Throwable $e = null) {
                RunRecorder::record(null, 'batch:finally', ['batchId' => $batch->id, 'exception' => $e ? get_class($e) : null]);
            })
            ->dispatch();

        return 'batch '.$batch->id;
    }

    private static function episodeImport(): string
    {
        $podcasts = [];
        foreach ([1, 2, 3] as $id) {
            $podcasts[$id] = Podcast::query()->firstOrCreate(['id' => $id], ['title' => "Podcast {$id}"]);
        }
        $make = function (string $prefix, int $n, array $failing) use ($podcasts) {
            $jobs = [];
            for ($i = 1; $i <= $n; $i++) {
                $jobs[] = new EpisodeImportJob($podcasts[1 + $i % 3], $prefix.$i, in_array($i, $failing, true));
            }

            return $jobs;
        };
        $ids = [];
        foreach ([['all-ok', $make('ok-', 4, []), false], ['some-fail', $make('sf-', 6, [2, 5]), true]] as [$name, $jobs, $allowFailures]) {
            $batch = Bus::batch($jobs)
                ->name($name)
                ->then(function (Batch $batch) {
                    RunRecorder::record(null, 'batch:then', ['batch' => $batch->name, 'pending' => $batch->pendingJobs, 'failed' => $batch->failedJobs]);
                })
                ->catch(function (Batch $batch, Throwable $e) {
                    RunRecorder::record(null, 'batch:catch', ['batch' => $batch->name, 'exception' => get_class($e), 'message' => $e->getMessage()]);
                })
                ->finally(function (Batch $batch) {
                    RunRecorder::record(null, 'batch:finally', ['batch' => $batch->name, 'pending' => $batch->pendingJobs, 'failed' => $batch->failedJobs]);
                });
            if ($allowFailures) {
                $batch->allowFailures();
            }
            $ids[] = $batch->dispatch()->id;
        }
        foreach ($make('php-', 4, [3]) as $job) {
            dispatch($job->onQueue('default'));
        }

        return 'batch '.implode(' ', $ids).' and 4 on default';
    }
}
