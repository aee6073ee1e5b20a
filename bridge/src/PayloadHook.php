<?php

namespace Laraworker\Bridge;

use Illuminate\Contracts\Container\Container;
use Illuminate\Queue\Queue;
use Laraworker\Bridge\Metadata\JobMetadata;

/**
 * Stamps the "laraworker" key (PROTOCOL.md) on the payload of every job
 * of a class config/laraworker.php routes, when Laravel builds the
 * payload. Queue::createPayloadUsing hooks are global (every connection
 * and driver) and run for every push that builds a payload: dispatch(),
 * Bus::dispatch(), Queue::push(), batches, each next chain link. They do
 * not run for pushRaw (queue:retry, a release): those re-push a payload
 * that already has the key, unchanged.
 */
final class PayloadHook
{
    public static function register(Container $app, Routes $routes): void
    {
        Queue::createPayloadUsing(function ($connection, $queue, $payload) use ($app, $routes) {
            $job = is_array($payload['data'] ?? null) ? ($payload['data']['command'] ?? null) : null;
            if (! is_object($job) || $routes->match($job) === null) {
                return [];
            }

            return [JobMetadata::KEY => (new JobMetadata($app))->describe($job, $payload)];
        });
    }
}
