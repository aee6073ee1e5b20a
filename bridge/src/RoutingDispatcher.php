<?php

namespace Laraworker\Bridge;

use Illuminate\Bus\Dispatcher;

/**
 * Laravel's bus dispatcher, routing queued jobs as config/laraworker.php
 * says before they are pushed, and the links of Bus::chain() before they
 * are serialized into the chain (so PHP and Go push each link where the
 * routes say).
 */
class RoutingDispatcher extends Dispatcher
{
    /** @var Routes */
    private $routes;

    /** @var bool Laravel 13+: Queue::route() routes dispatched jobs itself */
    private $laravelRoutes;

    /**
     * A routing copy of the app's dispatcher, with its queue resolver,
     * pipes and handlers.
     */
    public static function replacing(Dispatcher $dispatcher, Routes $routes, bool $laravelRoutes): self
    {
        $copy = (new \ReflectionClass(self::class))->newInstanceWithoutConstructor();
        foreach (get_object_vars($dispatcher) as $name => $value) {
            $copy->{$name} = $value;
        }
        $copy->routes = $routes;
        $copy->laravelRoutes = $laravelRoutes;

        return $copy;
    }

    public function dispatchToQueue($command)
    {
        if (! $this->laravelRoutes) {
            $this->routes->apply($command);
        } elseif ($this->routes->match($command) !== null && $this->routes->target($command) === null) {
            $this->keepOnPhp($command);
        }

        return parent::dispatchToQueue($command);
    }

    /**
     * Laravel 13's Queue::route would move a job the bridge keeps on PHP (a
     * member of a batch with callbacks, see Routes::target): pin it where
     * it would go without routes.
     */
    private function keepOnPhp($command): void
    {
        $connection = $command->connection ?? $this->container['config']->get('queue.default');
        $command->onConnection($connection);
        if (($command->queue ?? null) === null) {
            $command->onQueue($this->container['config']->get("queue.connections.{$connection}.queue"));
        }
    }

    public function chain($jobs = null)
    {
        return RoutingPendingChain::from(parent::chain($jobs), $this->routes);
    }
}
