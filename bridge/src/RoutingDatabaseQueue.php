<?php

namespace Laraworker\Bridge;

use Illuminate\Queue\DatabaseQueue;

/**
 * Laravel's database queue, routing job objects pushed without a queue
 * name (RoutesPushes). Everything else, popping included, is Laravel's own.
 */
class RoutingDatabaseQueue extends DatabaseQueue
{
    use RoutesPushes;
}
