<?php

namespace Laraworker\Bridge;

use Illuminate\Bus\BatchRepository;
use Illuminate\Bus\Dispatcher;
use Illuminate\Console\Events\CommandStarting;
use Illuminate\Queue\Connectors\RedisConnector;
use Illuminate\Queue\Events\JobExceptionOccurred;
use Illuminate\Queue\Events\JobFailed;
use Illuminate\Queue\Events\JobProcessed;
use Illuminate\Queue\Events\JobProcessing;
use Illuminate\Queue\Events\Looping;
use Illuminate\Queue\Events\WorkerStopping;
use Illuminate\Queue\QueueManager;
use Illuminate\Support\ServiceProvider;

/**
 * Routes the job classes of config/laraworker.php to the queue laraworker
 * serves: on Laravel 13+ through Queue::route(), plus the bridge's own hooks
 * for what Queue::route() leaves alone (chain links, batch members,
 * Queue::push() of objects); on Laravel 8 to 12 through those hooks and a
 * routing bus dispatcher. It stamps their payloads with the "laraworker"
 * key (PayloadHook, PROTOCOL.md), and checks where the hook jobs Go pushes
 * back (Jobs\RunFailureHooks, Jobs\RunBatchCallbacks) go. With no routes
 * configured it routes nothing, and stamps the key on every job unless
 * 'record' is 'routed'.
 * With 'fleet' on, it also records queue:work processes in laraworker's
 * tables for the dashboard (FleetRecorder).
 */
class LaraworkerServiceProvider extends ServiceProvider
{
    /**
     * What this bridge, with a laraworker that supports it, does beyond
     * routing classes to Go's queue; `laraworker audit` and `laraworker
     * work` read it (PROTOCOL.md):
     * - failed: when Go fails a job, RunFailureHooks runs the class's
     *   failed() and fires JobFailed in PHP;
     * - batch-callbacks: the batch callbacks a Go success or failure
     *   triggers run in PHP (members of such batches run in Go);
     * - chain-catch: a failed chain link's catch callbacks run in PHP;
     * - unique: ShouldBeUnique classes are routed, their lock recorded in
     *   the payload for Go to release;
     * - models: the models' tables and deleteWhenMissingModels are recorded
     *   in the payload for Go's missing-model check;
     * - middleware: Laravel's job middleware is recorded in the payload, with
     *   the keys the app's Laravel computes, for Go to apply on the same
     *   locks and limits;
     * - record-all: the record (unique lock, models, middleware) goes on
     *   the payload of every queued job, routed or not, unless
     *   config/laraworker.php says 'record' => 'routed': a class that
     *   `laraworker work --route` sends to Go carries it too.
     */
    public const CAPABILITIES = ['failed', 'batch-callbacks', 'chain-catch', 'unique', 'models', 'middleware', 'record-all'];

    public function register()
    {
        $this->mergeConfigFrom(__DIR__.'/../config/laraworker.php', 'laraworker');

        $routes = Routes::fromConfig(
            (array) $this->app['config']->get('laraworker', []),
            function (string $batchId) {
                return self::batchHasCallbacks($this->app->make(BatchRepository::class)->find($batchId));
            },
            function (string $message) {
                $this->app['log']->warning($message);
            }
        );
        $recordAll = PayloadHook::recordsAll((array) $this->app['config']->get('laraworker', []));
        if ($routes->isEmpty()) {
            // Nothing routed by config: the record still goes on every job
            // ('record' => 'all'), for the classes `laraworker work --route`
            // sends to Go.
            if ($recordAll) {
                PayloadHook::register($this->app, $routes, true);
            }

            return;
        }
        $this->app->instance(Routes::class, $routes);
        $this->app->instance(HooksQueue::class, HooksQueue::resolve(
            (array) $this->app['config']->get('laraworker', []),
            (array) $this->app['config']->get('queue', []),
            $routes
        ));
        PayloadHook::register($this->app, $routes, $recordAll);
        $laravelRoutes = method_exists(QueueManager::class, 'route');

        $this->app->extend(Dispatcher::class, function ($dispatcher) use ($routes, $laravelRoutes) {
            return $dispatcher instanceof RoutingDispatcher
                ? $dispatcher
                : RoutingDispatcher::replacing($dispatcher, $routes, $laravelRoutes);
        });
        $this->app->extend('queue', function ($manager, $app) use ($routes) {
            $manager->addConnector('database', function () use ($app, $routes) {
                return new RoutingDatabaseConnector($app['db'], $routes);
            });
            $redis = self::connectorResolver($manager, 'redis');
            $manager->addConnector('redis', function () use ($app, $routes, $redis) {
                return new RoutingRedisConnector(
                    $redis !== null ? $redis() : new RedisConnector($app['redis']),
                    $routes,
                    function (string $message) use ($app) {
                        $app['log']->warning($message);
                    }
                );
            });

            return $manager;
        });
    }

    public function boot()
    {
        if ($this->app->runningInConsole()) {
            $this->publishes([__DIR__.'/../config/laraworker.php' => $this->app->configPath('laraworker.php')], 'laraworker-config');
            // Opt-in: the claim index (`laraworker tables --index`) as a migration.
            $this->publishes([__DIR__.'/../database/migrations' => $this->app->databasePath('migrations')], 'laraworker-migrations');
        }
        if ($this->app->bound(Routes::class) && method_exists(QueueManager::class, 'route')) {
            foreach ($this->app->make(Routes::class)->all() as $class => [$connection, $queue]) {
                $this->app['queue']->route($class, $queue, $connection);
            }
        }
        if ($this->app->runningInConsole() && $this->app['config']->get('laraworker.fleet')) {
            $this->recordFleet(new FleetRecorder($this->app));
        }
    }

    /**
     * Feeds the worker's events to the recorder. The listeners return
     * nothing: a Looping listener that returned false would pause the worker.
     */
    private function recordFleet(FleetRecorder $recorder): void
    {
        $events = $this->app['events'];
        $events->listen(CommandStarting::class, function (CommandStarting $e) use ($recorder) {
            $recorder->commandStarting($e->input);
        });
        $events->listen(Looping::class, function (Looping $e) use ($recorder) {
            $recorder->looping($e);
        });
        $events->listen(JobProcessing::class, function (JobProcessing $e) use ($recorder) {
            $recorder->jobProcessing($e);
        });
        $events->listen(JobProcessed::class, function (JobProcessed $e) use ($recorder) {
            $recorder->jobProcessed($e);
        });
        $events->listen(JobExceptionOccurred::class, function (JobExceptionOccurred $e) use ($recorder) {
            $recorder->jobExceptionOccurred($e);
        });
        $events->listen(JobFailed::class, function (JobFailed $e) use ($recorder) {
            $recorder->jobFailed($e);
        });
        $events->listen(WorkerStopping::class, function (WorkerStopping $e) use ($recorder) {
            $recorder->workerStopping($e);
        });
    }

    /**
     * The resolver the queue manager holds for a driver (QueueManager keeps
     * them in a protected array with no getter), or null.
     */
    private static function connectorResolver(QueueManager $manager, string $driver): ?\Closure
    {
        return (function () use ($driver) {
            return $this->connectors[$driver] ?? null;
        })->call($manager);
    }

    /**
     * Whether a batch has PHP callbacks (then, catch, finally...): with
     * 'route_batches_with_callbacks' off, the jobs of such batches stay on
     * PHP workers.
     */
    private static function batchHasCallbacks($batch): bool
    {
        if ($batch === null) {
            return false;
        }
        foreach (['then', 'catch', 'finally', 'progress', 'before', 'failure'] as $key) {
            if (! empty($batch->options[$key])) {
                return true;
            }
        }

        return false;
    }
}
