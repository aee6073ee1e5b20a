<?php

namespace Laraworker\Bridge;

use Illuminate\Foundation\Bus\PendingChain;

/**
 * A Bus::chain() whose links are routed when it is dispatched, unless the
 * chain itself was put on a queue (or connection) with onQueue().
 */
class RoutingPendingChain extends PendingChain
{
    /** @var Routes */
    private $routes;

    public static function from(PendingChain $pending, Routes $routes): self
    {
        $chain = (new \ReflectionClass(self::class))->newInstanceWithoutConstructor();
        foreach (get_object_vars($pending) as $name => $value) {
            $chain->{$name} = $value;
        }
        $chain->routes = $routes;

        return $chain;
    }

    public function dispatch()
    {
        foreach (array_merge([$this->job], (array) $this->chain) as $link) {
            if (is_object($link)) {
                $this->routes->apply($link, $this->queue === null, $this->connection === null);
            }
        }

        return parent::dispatch(...func_get_args());
    }
}
