<?php

namespace Laraworker\Bridge;

use InvalidArgumentException;

/**
 * The queue the bridge's hook jobs go to ('hooks_queue' in
 * config/laraworker.php), resolved as a Go worker resolves it: the
 * connection given, else laraworker's 'connection', else queue.default;
 * the queue given, else that connection's default queue.
 */
final class HooksQueue
{
    /**
     * @param  array  $laraworker  config('laraworker')
     * @param  array  $queue  config('queue')
     * @return array{0: string, 1: string} [connection, queue]
     *
     * @throws InvalidArgumentException when the hooks cannot go there: a
     *                                  connection that does not exist or is not a database one, no queue name,
     *                                  or a queue laraworker serves
     */
    public static function resolve(array $laraworker, array $queue, Routes $routes): array
    {
        $setting = $laraworker['hooks_queue'] ?? [];
        if (is_string($setting)) {
            $setting = ['queue' => $setting];
        }
        if (! is_array($setting)) {
            throw new InvalidArgumentException('config/laraworker.php hooks_queue: want [\'connection\' => ..., \'queue\' => ...]');
        }
        $default = $queue['default'] ?? null;
        $connection = self::name($setting['connection'] ?? null) ?? self::name($laraworker['connection'] ?? null) ?? self::name($default);
        $where = "config/laraworker.php hooks_queue";
        if ($connection === null || ! isset($queue['connections'][$connection])) {
            throw new InvalidArgumentException("{$where}: no queue connection [".($connection ?? '').'] in config/queue.php');
        }
        $driver = $queue['connections'][$connection]['driver'] ?? null;
        if ($driver !== 'database') {
            throw new InvalidArgumentException("{$where}: the connection [{$connection}] uses the [{$driver}] driver; laraworker pushes hook jobs in its database transaction (the one that writes failed_jobs and job_batches, whatever the queue's driver), so it must be a database connection: set hooks_queue.connection (LARAWORKER_HOOKS_CONNECTION) to a database queue connection a php artisan queue:work serves");
        }
        $name = self::name($setting['queue'] ?? null) ?? self::name($queue['connections'][$connection]['queue'] ?? null);
        if ($name === null) {
            throw new InvalidArgumentException("{$where}: no queue name, and the connection [{$connection}] has no default queue");
        }
        foreach ($routes->all() as $class => [$routeConnection, $routeQueue]) {
            if ($routeQueue === $name && ($routeConnection ?? self::name($default)) === $connection) {
                throw new InvalidArgumentException("{$where}: [{$connection}] [{$name}] is where laraworker runs {$class}; the hook jobs need a queue a PHP worker serves");
            }
        }

        return [$connection, $name];
    }

    private static function name($value): ?string
    {
        return is_string($value) && $value !== '' ? $value : null;
    }
}
