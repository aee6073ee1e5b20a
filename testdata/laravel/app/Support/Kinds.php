<?php

namespace App\Support;

use App\Handlers\StringJobHandler;
use App\Jobs\BatchMemberJob;
use App\Jobs\ChainLinkJob;
use App\Jobs\DeclaredRetryJob;
use App\Jobs\DeletableModelJob;
use App\Jobs\DelayedJob;
use App\Jobs\EncryptedJob;
use App\Jobs\EnumsDatesJob;
use App\Jobs\LeakyJob;
use App\Jobs\FailingJob;
use App\Jobs\MaxExceptionsJob;
use App\Jobs\ModelsJob;
use App\Jobs\MovableJob;
use App\Jobs\NoopJob;
use App\Jobs\OptionsJob;
use App\Jobs\PrivatePropsJob;
use App\Jobs\RetryUntilJob;
use App\Jobs\Routed\MonthlyReport;
use App\Jobs\Routed\UniqueReport;
use App\Jobs\ScalarsJob;
use App\Jobs\Shapes\ExchangeRatesJob;
use App\Jobs\Shapes\WholeModelsJob;
use App\Jobs\SleepJob;
use App\Jobs\UniqueJob;
use App\Models\Podcast;
use App\Models\User;
use Carbon\Carbon;
use Illuminate\Bus\Batch;
use Illuminate\Queue\CallQueuedClosure;
use Illuminate\Support\Facades\Bus;
use Illuminate\Support\Facades\Queue;
use Throwable;

/**
 * The named kinds of job `php artisan app:dispatch <kind>` can push.
 * Each dispatcher takes the --queue / --delay overrides (null = the kind's default)
 * and returns a short description of what it pushed.
 */
class Kinds
{
    /**
     * @return array<string, callable(?string, ?int): string>
     */
    public static function all(): array
    {
        return [
            'noop' => fn ($q, $d) => self::job(new NoopJob, $q, $d),
            'scalars' => fn ($q, $d) => self::job(new ScalarsJob, $q, $d),
            'options' => fn ($q, $d) => self::job(new OptionsJob, $q, $d),
            'retry-until' => fn ($q, $d) => self::job(new RetryUntilJob, $q, $d),
            'max-exceptions' => fn ($q, $d) => self::job(new MaxExceptionsJob, $q, $d),
            'throws' => fn ($q, $d) => self::job(new FailingJob, $q, $d),
            'models' => fn ($q, $d) => self::models($q, $d),
            'encrypted' => fn ($q, $d) => self::job(new EncryptedJob, $q, $d),
            'enums-dates' => fn ($q, $d) => self::job(new EnumsDatesJob, $q, $d),
            'delayed' => fn ($q, $d) => self::job(new DelayedJob, $q ?? 'high', $d ?? 10),
            'private-props' => fn ($q, $d) => self::job(new PrivatePropsJob, $q, $d),
            'sleep' => fn ($q, $d) => self::job(new SleepJob, $q, $d),
            'closure' => fn ($q, $d) => self::closure($q, $d),
            'chain' => fn ($q, $d) => self::chain($q ?? 'chains', false),
            'chain-catch' => fn ($q, $d) => self::chain($q ?? 'chains', true),
            'batch' => fn ($q, $d) => self::batch($q, false),
            'batch-callbacks' => fn ($q, $d) => self::batch($q ?? 'batches', true),
            'batch-fail' => fn ($q, $d) => self::batchFail($q),
            'string' => fn ($q, $d) => self::string($q, ['podcastId' => 42, 'tags' => ['a', 'b'], 'title' => 'Ünïcode / slash']),
            'string-nodata' => fn ($q, $d) => self::string($q, null),
        ];
    }

    /**
     * Kinds for moving MovableJob from PHP to Go (not part of "all"): the
     * dispatch forms the bridge routes. None names a queue unless --queue.
     *
     * @return array<string, callable(?string, ?int): string>
     */
    public static function movable(): array
    {
        return [
            'movable' => fn ($q, $d) => self::job(new MovableJob('plain'), $q, $d),
            'movable-push' => fn ($q, $d) => self::push(new MovableJob('pushed'), $q, $d),
            'movable-chain' => fn ($q, $d) => self::movableChain(),
            'movable-batch' => fn ($q, $d) => self::movableBatch(),
            'report' => fn ($q, $d) => self::job(new MonthlyReport, $q, $d),
            'unique-report' => fn ($q, $d) => self::job(new UniqueReport, $q, $d),
        ];
    }

    private static function push(object $job, ?string $queue, ?int $delay): string
    {
        $delay === null ? Queue::push($job, '', $queue) : Queue::later($delay, $job, '', $queue);

        return get_class($job).' (Queue::push)';
    }

    // A chain that names no queue: MovableJob, ChainLinkJob, MovableJob.
    private static function movableChain(): string
    {
        Bus::chain([new MovableJob('link 1'), new ChainLinkJob(2, 'php link'), new MovableJob('link 3')])->dispatch();

        return 'chain of MovableJob, ChainLinkJob, MovableJob';
    }

    // A batch without callbacks that names no queue.
    private static function movableBatch(): string
    {
        $batch = Bus::batch([new MovableJob('member 1'), new BatchMemberJob(2), new MovableJob('member 3')])->dispatch();

        return 'batch '.$batch->id;
    }

    /**
     * Kinds for the class-declaration tests (unique locks, missing models, declared
     * options): dispatched by name only, never by "all".
     *
     * @return array<string, callable(?string, ?int): string>
     */
    public static function byNameOnly(): array
    {
        return [
            'unique' => fn ($q, $d) => self::job(new UniqueJob(1), $q, $d),
            'unique-2' => fn ($q, $d) => self::job(new UniqueJob(2), $q, $d),
            'deletable-model' => fn ($q, $d) => self::job(new DeletableModelJob(
                Podcast::query()->firstOrCreate(['id' => 77], ['title' => 'Soon gone'])), $q, $d),
            'declared-retry' => fn ($q, $d) => self::job(new DeclaredRetryJob(2), $q, $d),
            'exchange-rates' => fn ($q, $d) => self::seeded(fn () => new ExchangeRatesJob, $q, $d),
            'exchange-rates-dated' => fn ($q, $d) => self::seeded(fn () => new ExchangeRatesJob(Carbon::parse('2026-03-04 15:16:17', 'Europe/Paris')), $q, $d),
            'whole-models' => fn ($q, $d) => self::seeded(fn () => new WholeModelsJob(
                Podcast::query()->findOrFail(42), User::query()->orderBy('id')->get(), collect([Podcast::query()->findOrFail(42), 'x' => 7])), $q, $d),
            'leaky' => fn ($q, $d) => self::job(new LeakyJob(
                config('database.connections.'.config('database.default').'.password'), config('app.key')), $q, $d),
        ];
    }

    private static function job(object $job, ?string $queue, ?int $delay): string
    {
        if ($queue !== null) {
            $job->onQueue($queue);
        }
        if ($delay !== null) {
            $job->delay($delay);
        }
        dispatch($job);

        return get_class($job);
    }

    private static function models(?string $queue, ?int $delay): string
    {
        $podcast = self::seedModels();
        $users = User::query()->whereIn('id', [1, 2])->orderBy('id')->get();

        return self::job(new ModelsJob($podcast, $users), $queue, $delay);
    }

    /** Podcast 42 and users 1 and 2, as the model kinds hold them. */
    private static function seedModels(): Podcast
    {
        $podcast = Podcast::query()->firstOrCreate(['id' => 42], ['title' => 'Laravel Stories']);
        foreach ([1 => 'Ada', 2 => 'Linus'] as $id => $name) {
            User::query()->firstOrCreate(['id' => $id], [
                'name' => $name,
                'email' => strtolower($name).'@example.com',
                'password' => 'not-a-real-hash',
            ]);
        }

        return $podcast;
    }

    /** Dispatches the job make() builds once the models exist. */
    private static function seeded(callable $make, ?string $queue, ?int $delay): string
    {
        self::seedModels();

        return self::job($make(), $queue, $delay);
    }

    private static function closure(?string $queue, ?int $delay): string
    {
        $podcastId = 42;
        $pending = dispatch(function (CallQueuedClosure $job) use ($podcastId) {
            RunRecorder::record($job->job, CallQueuedClosure::class, ['podcastId' => $podcastId]);
        });
        if ($queue !== null) {
            $pending->onQueue($queue);
        }
        if ($delay !== null) {
            $pending->delay($delay);
        }

        return CallQueuedClosure::class;
    }

    private static function chain(string $queue, bool $withCatch): string
    {
        $chain = Bus::chain([
            new ChainLinkJob(1, 'first'),
            new ChainLinkJob(2, 'second'),
            new ChainLinkJob(3, 'third'),
        ])->onConnection('database')->onQueue($queue);

        if ($withCatch) {
            $chain->catch(function (Throwable $e) {
                RunRecorder::record(null, 'chain:catch', ['message' => $e->getMessage()]);
            });
        }
        $chain->dispatch();

        return 'chain of 3 '.ChainLinkJob::class;
    }

    private static function batch(?string $queue, bool $withCallbacks): string
    {
        $members = $withCallbacks
            ? [new BatchMemberJob(1), new BatchMemberJob(2), new BatchMemberJob(3)]
            : [new BatchMemberJob(1), new BatchMemberJob(2)];
        $pending = Bus::batch($members);

        if ($withCallbacks) {
            $pending->name('podcast-batch')
                ->allowFailures()
                ->then(function (Batch $batch) {
                    RunRecorder::record(null, 'batch:then', ['batchId' => $batch->id]);
                })
                ->catch(function (Batch $batch, Throwable $e) {
                    RunRecorder::record(null, 'batch:catch', ['batchId' => $batch->id, 'message' => $e->getMessage()]);
                })
                ->finally(function (Batch $batch) {
                    RunRecorder::record(null, 'batch:finally', ['batchId' => $batch->id]);
                });
        }
        if ($queue !== null) {
            $pending->onQueue($queue);
        }

        return 'batch '.$pending->dispatch()->id;
    }

    private static function batchFail(?string $queue): string
    {
        $pending = Bus::batch([new BatchMemberJob(1), new BatchMemberJob(2, true)])
            ->name('failing-batch')
            ->catch(function (Batch $batch, Throwable $e) {
                RunRecorder::record(null, 'batch:catch', ['batchId' => $batch->id, 'message' => $e->getMessage()]);
            })
            ->finally(function (Batch $batch) {
                RunRecorder::record(null, 'batch:finally', ['batchId' => $batch->id]);
            });
        if ($queue !== null) {
            $pending->onQueue($queue);
        }

        return 'batch '.$pending->dispatch()->id;
    }

    private static function string(?string $queue, ?array $data): string
    {
        $job = StringJobHandler::class.'@handle';
        if ($data === null) {
            Queue::push($job, '', $queue);
        } else {
            Queue::push($job, $data, $queue);
        }

        return $job;
    }
}
