<?php

namespace Laraworker\Bridge;

use Illuminate\Queue\RedisQueue;

/**
 * Laravel's redis queue, routing job objects pushed without a queue name
 * (RoutesPushes). Everything else, popping included, is Laravel's own.
 */
class RoutingRedisQueue extends RedisQueue
{
    use RoutesPushes;
}
