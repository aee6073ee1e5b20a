<?php

namespace Laraworker\Bridge;

/**
 * Routing of job objects pushed onto a queue connection without a queue
 * name: Queue::push(), Queue::later() and bulk() (the members of a
 * Bus::batch() that was not put on a queue). For the queue classes of
 * every driver the bridge routes on (RoutingDatabaseQueue,
 * RoutingRedisQueue); the class using it sets $routes and extends the
 * driver's own queue, whose push, later and bulk do the rest.
 */
trait RoutesPushes
{
    /** @var Routes */
    private $routes;

    /**
     * A routing copy of a queue the driver's connector made, with all its
     * state (connection, retry_after, the container...).
     *
     * @return static
     */
    public static function replacing($queue, Routes $routes): self
    {
        $copy = (new \ReflectionClass(static::class))->newInstanceWithoutConstructor();
        foreach (get_object_vars($queue) as $name => $value) {
            $copy->{$name} = $value;
        }
        $copy->routes = $routes;

        return $copy;
    }

    public function push($job, $data = '', $queue = null)
    {
        [$connection, $queue] = $this->routed($job, $queue);

        return $connection === null
            ? parent::push($job, $data, $queue)
            : $this->container['queue']->connection($connection)->push($job, $data, $queue);
    }

    public function later($delay, $job, $data = '', $queue = null)
    {
        [$connection, $queue] = $this->routed($job, $queue);

        return $connection === null
            ? parent::later($delay, $job, $data, $queue)
            : $this->container['queue']->connection($connection)->later($delay, $job, $data, $queue);
    }

    public function bulk($jobs, $data = '', $queue = null)
    {
        if ($queue !== null || $this->routes->isEmpty()) {
            return parent::bulk($jobs, $data, $queue);
        }
        $groups = [];
        foreach ((array) $jobs as $job) {
            [$connection, $to] = $this->routed($job, null);
            $groups[$connection.'|'.$to]['route'] = [$connection, $to];
            $groups[$connection.'|'.$to]['jobs'][] = $job;
        }
        $result = null;
        foreach ($groups as $group) {
            [$connection, $to] = $group['route'];
            $result = $connection === null
                ? parent::bulk($group['jobs'], $data, $to)
                : $this->container['queue']->connection($connection)->bulk($group['jobs'], $data, $to);
        }

        return $result;
    }

    /**
     * Where a job pushed with $queue goes: [another connection or null,
     * queue]. Only a job object pushed without a queue name, and without
     * one of its own, is routed.
     */
    private function routed($job, $queue): array
    {
        if ($queue !== null || ! is_object($job) || ($job->queue ?? null) !== null) {
            return [null, $queue];
        }
        $route = $this->routes->target($job);
        if ($route === null) {
            return [null, $queue];
        }
        [$connection, $to] = $route;

        return [$connection !== null && $connection !== $this->getConnectionName() ? $connection : null, $to];
    }
}
