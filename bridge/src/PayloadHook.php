<?php

namespace Laraworker\Bridge;

use Illuminate\Contracts\Container\Container;
use Illuminate\Queue\Queue;
use Laraworker\Bridge\Metadata\JobMetadata;

/**
 * Stamps the "laraworker" key (PROTOCOL.md) on the payload of every
 * queued job (config/laraworker.php 'record' => 'all', the default), or
 * of every job of a class config/laraworker.php routes ('routed'), when
 * Laravel builds the payload. Every job: a class `laraworker work --route`
 * sends to Go carries its unique lock, models and middleware as a routed
 * one does. Queue::createPayloadUsing hooks are global (every connection
 * and driver) and run for every push that builds a payload: dispatch(),
 * Bus::dispatch(), Queue::push(), batches, each next chain link. They do
 * not run for pushRaw (queue:retry, a release): those re-push a payload
 * that already has the key, unchanged.
 */
final class PayloadHook
{
    /** The record on every queued job (config/laraworker.php 'record'). */
    public const RECORD_ALL = 'all';

    /** The record on the jobs of the classes config/laraworker.php routes only. */
    public const RECORD_ROUTED = 'routed';

    public static function register(Container $app, Routes $routes, bool $all = false): void
    {
        Queue::createPayloadUsing(function ($connection, $queue, $payload) use ($app, $routes, $all) {
            $job = is_array($payload['data'] ?? null) ? ($payload['data']['command'] ?? null) : null;
            if (! is_object($job) || (! $all && $routes->match($job) === null) || self::isBridgeJob($job)) {
                return [];
            }

            return [JobMetadata::KEY => (new JobMetadata($app))->describe($job, $payload)];
        });
    }

    /**
     * The bridge's own hook jobs (Jobs\RunFailureHooks, Jobs\RunBatchCallbacks)
     * run in PHP only, and their payload is exactly what PROTOCOL.md section
     * 2 says: they carry no record.
     */
    private static function isBridgeJob($job): bool
    {
        return strncmp(get_class($job), 'Laraworker\\Bridge\\', 18) === 0;
    }

    /**
     * Whether config('laraworker') asks for the record on every job.
     *
     * @throws \InvalidArgumentException for a value that is neither 'all' nor 'routed'
     */
    public static function recordsAll(array $config): bool
    {
        $record = $config['record'] ?? self::RECORD_ALL;
        if ($record !== self::RECORD_ALL && $record !== self::RECORD_ROUTED) {
            throw new \InvalidArgumentException("config/laraworker.php record: want 'all' or 'routed', got ".var_export($record, true));
        }

        return $record === self::RECORD_ALL;
    }
}
