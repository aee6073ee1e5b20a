<?php

namespace Laraworker\Bridge;

use Illuminate\Bus\BatchRepository;
use Illuminate\Bus\Dispatcher;
use Illuminate\Queue\QueueManager;
use Illuminate\Support\ServiceProvider;

/**
 * Routes the job classes of config/laraworker.php to the queue laraworker
 * serves: on Laravel 13+ through Queue::route(), plus the bridge's own hooks
 * for what Queue::route() leaves alone (chain links, batch members,
 * Queue::push() of objects); on Laravel 8 to 12 through those hooks and a
 * routing bus dispatcher. With no routes configured it changes nothing.
 */
class LaraworkerServiceProvider extends ServiceProvider
{
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
        if ($routes->isEmpty()) {
            return;
        }
        $this->app->instance(Routes::class, $routes);
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

            return $manager;
        });
    }

    public function boot()
    {
        if ($this->app->runningInConsole()) {
            $this->publishes([__DIR__.'/../config/laraworker.php' => $this->app->configPath('laraworker.php')], 'laraworker-config');
        }
        if ($this->app->bound(Routes::class) && method_exists(QueueManager::class, 'route')) {
            foreach ($this->app->make(Routes::class)->all() as $class => [$connection, $queue]) {
                $this->app['queue']->route($class, $queue, $connection);
            }
        }
    }

    /**
     * Whether a batch has PHP callbacks (then, catch, finally...): laraworker
     * leaves the jobs of such batches to PHP workers.
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
