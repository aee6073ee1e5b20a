<?php

namespace Laraworker\Bridge;

use Closure;
use Illuminate\Queue\Connectors\ConnectorInterface;
use Illuminate\Queue\RedisQueue;

/**
 * The redis queue connector, making routing queues. It wraps the connector
 * the app had (Laravel's own, unless a package such as Horizon put its own
 * first): a Laravel RedisQueue becomes a RoutingRedisQueue; another
 * package's queue class is left as it is (routing it would drop what that
 * class does), and Queue::push() on it is not routed, which is logged once.
 */
class RoutingRedisConnector implements ConnectorInterface
{
    /** @var ConnectorInterface */
    private $inner;

    /** @var Routes */
    private $routes;

    /** @var Closure fn (string $message): void */
    private $warn;

    public function __construct(ConnectorInterface $inner, Routes $routes, Closure $warn)
    {
        $this->inner = $inner;
        $this->routes = $routes;
        $this->warn = $warn;
    }

    public function connect(array $config)
    {
        $queue = $this->inner->connect($config);
        if (get_class($queue) === RedisQueue::class) {
            return RoutingRedisQueue::replacing($queue, $this->routes);
        }
        ($this->warn)('laraworker: the redis queue connector makes '.get_class($queue).', not Laravel\'s RedisQueue: Queue::push() of routed classes without a queue name is not routed on it (dispatch(), chains and batches are).');

        return $queue;
    }
}
