<?php

namespace Laraworker\Bridge;

use Illuminate\Database\ConnectionResolverInterface;
use Illuminate\Queue\Connectors\DatabaseConnector;

/**
 * The database queue connector, making routing queues.
 */
class RoutingDatabaseConnector extends DatabaseConnector
{
    /** @var Routes */
    private $routes;

    public function __construct(ConnectionResolverInterface $connections, Routes $routes)
    {
        parent::__construct($connections);
        $this->routes = $routes;
    }

    public function connect(array $config)
    {
        return RoutingDatabaseQueue::replacing(parent::connect($config), $this->routes);
    }
}
