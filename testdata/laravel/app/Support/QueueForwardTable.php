<?php

namespace App\Support;

/**
 * What Laravel 13.26's Queue::forward registers, for this Laravel 8.83 app,
 * which has none: the container's `queue.routes` keeps the forwards as
 * [from => [connection, to]] in its `$forwards` property (QueueRoutes),
 * which laraworker reads when it boots the app. Only the shape is
 * imitated; Laravel 8.83's own queues do not forward anything.
 */
class QueueForwardTable
{
    /** @var array<string, array{0: ?string, 1: ?string}> */
    protected $forwards = [];

    public function forward(string $from, ?string $to, ?string $connection = null): void
    {
        $this->forwards[$from] = [$connection, $to];
    }
}
