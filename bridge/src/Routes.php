<?php

namespace Laraworker\Bridge;

use Closure;
use InvalidArgumentException;

/**
 * The routes of config/laraworker.php: which job classes go to which queue
 * (and connection), matched like Laravel 13's Queue::route: the job's class,
 * then its parent classes, interfaces and traits.
 */
class Routes
{
    /** @var array<string, array{0: string|null, 1: string}> class => [connection, queue] */
    private $routes = [];

    /** @var Closure|null fn (string $batchId): bool, whether the batch has PHP callbacks */
    private $batchHasCallbacks;

    /** @var Closure|null fn (string $message): void */
    private $warn;

    /** @var array<string, bool> classes already warned about */
    private $warned = [];

    /** @var array<string, bool> batch id => has callbacks */
    private $batches = [];

    /** @var bool route members of batches with callbacks too (Go pushes RunBatchCallbacks) */
    private $routeBatchesWithCallbacks = false;

    /**
     * @param  array  $config  config('laraworker')
     *
     * @throws InvalidArgumentException for a class that does not exist or a
     *                                  queue that is not a name
     */
    public static function fromConfig(array $config, ?Closure $batchHasCallbacks = null, ?Closure $warn = null): self
    {
        $routes = new self;
        $routes->batchHasCallbacks = $batchHasCallbacks;
        $routes->warn = $warn;
        $routes->routeBatchesWithCallbacks = (bool) ($config['route_batches_with_callbacks'] ?? true);
        $defaultQueue = $config['queue'] ?? 'laraworker';
        $defaultConnection = $config['connection'] ?? null;

        foreach ((array) ($config['jobs'] ?? []) as $class => $target) {
            if (is_int($class)) {
                [$class, $target] = [$target, null];
            }
            $queue = is_array($target) ? ($target['queue'] ?? $defaultQueue) : ($target ?? $defaultQueue);
            $connection = is_array($target) ? ($target['connection'] ?? $defaultConnection) : $defaultConnection;
            $routes->add((string) $class, $queue, $connection);
        }

        return $routes;
    }

    private function add(string $class, $queue, $connection): void
    {
        $where = "config/laraworker.php routes [{$class}]";
        if (strpos($class, '\\\\') !== false) {
            $single = preg_replace('/\\\\+/', '\\', $class);
            throw new InvalidArgumentException("{$where}: doubled backslashes; write it as {$single}::class");
        }
        $class = ltrim($class, '\\');
        if (! class_exists($class) && ! interface_exists($class) && ! trait_exists($class)) {
            throw new InvalidArgumentException("{$where}: no such class, interface or trait");
        }
        if (! is_string($queue) || $queue === '') {
            throw new InvalidArgumentException("{$where}: the queue must be a non-empty name");
        }
        if ($connection !== null && (! is_string($connection) || $connection === '')) {
            throw new InvalidArgumentException("{$where}: the connection must be a name or null");
        }
        $this->routes[$class] = [$connection, $queue];
    }

    public function isEmpty(): bool
    {
        return $this->routes === [];
    }

    /**
     * @return array<string, array{0: string|null, 1: string}> class => [connection, queue]
     */
    public function all(): array
    {
        return $this->routes;
    }

    /**
     * The route configured for a job: its class, then its parents,
     * interfaces and traits. Only queueable jobs (Queueable's onQueue) match.
     *
     * @return array{0: string|null, 1: string}|null [connection, queue]
     */
    public function match($job): ?array
    {
        if ($this->routes === [] || ! is_object($job) || ! method_exists($job, 'onQueue')) {
            return null;
        }
        $classes = array_merge(
            [get_class($job)],
            array_values(class_parents($job) ?: []),
            array_values(class_implements($job) ?: []),
            array_values(class_uses_recursive($job))
        );
        foreach ($classes as $class) {
            if (isset($this->routes[$class])) {
                return $this->routes[$class];
            }
        }

        return null;
    }

    /**
     * The route of a job that may go to Go: matched, and not a member of a
     * batch with PHP callbacks unless 'route_batches_with_callbacks' says
     * Go hands those callbacks back to PHP (RunBatchCallbacks).
     *
     * @return array{0: string|null, 1: string}|null [connection, queue]
     */
    public function target($job): ?array
    {
        $route = $this->match($job);
        if ($route === null) {
            return null;
        }
        $batchId = $job->batchId ?? null;
        if ($batchId !== null && ! $this->routeBatchesWithCallbacks && $this->batchHasCallbacks($batchId)) {
            $this->warnOnce('batch '.get_class($job), 'laraworker: '.get_class($job).' matches a route of config/laraworker.php but its batch has callbacks: it stays on PHP because route_batches_with_callbacks is off (laraworker runs their callbacks through the bridge: turn it on).');

            return null;
        }

        return $route;
    }

    /**
     * Puts a job on its route's connection and queue, where neither the job
     * nor its chain or batch named one ($queue/$connection false).
     */
    public function apply($job, bool $queue = true, bool $connection = true): void
    {
        $route = $this->target($job);
        if ($route === null) {
            return;
        }
        if ($connection && $route[0] !== null && ($job->connection ?? null) === null) {
            $job->onConnection($route[0]);
        }
        if ($queue && ($job->queue ?? null) === null) {
            $job->onQueue($route[1]);
        }
    }

    private function batchHasCallbacks(string $batchId): bool
    {
        if ($this->batchHasCallbacks === null) {
            return false;
        }
        if (! isset($this->batches[$batchId])) {
            if (count($this->batches) > 1000) {
                $this->batches = [];
            }
            $this->batches[$batchId] = (bool) ($this->batchHasCallbacks)($batchId);
        }

        return $this->batches[$batchId];
    }

    private function warnOnce(string $class, string $message): void
    {
        if ($this->warn !== null && ! isset($this->warned[$class])) {
            $this->warned[$class] = true;
            ($this->warn)($message);
        }
    }
}
