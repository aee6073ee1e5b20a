<?php

namespace Laraworker\Bridge\Metadata;

use Illuminate\Contracts\Container\Container;
use Laraworker\Bridge\Laravel;
use Throwable;

/**
 * The "laraworker" payload key (PROTOCOL.md): what a Go worker needs to
 * run a job as PHP would and that Laravel 8-12 payloads do not carry,
 * recorded when the job is queued (Queue::createPayloadUsing).
 */
final class JobMetadata
{
    /** The payload key. */
    public const KEY = 'laraworker';

    /** The format version ("v"). */
    public const VERSION = 1;

    /** @var Container */
    private $app;

    /** @var array<string, bool> class => warned, so a broken class logs once per process */
    private static $warned = [];

    public function __construct(Container $app)
    {
        $this->app = $app;
    }

    /**
     * The key's value for a job being queued; $payload is the payload
     * Laravel has built so far (uuid, displayName, ...).
     */
    public function describe($job, array $payload): array
    {
        $stores = new Stores($this->app);
        $out = [
            'v' => self::VERSION,
            'laravel' => Laravel::version(),
            'at' => time(),
            'class' => get_class($job),
        ];
        $errors = [];
        $middleware = $this->part($job, 'middleware', $errors, function () use ($job, $payload, $stores) {
            return (new Middleware($this->app, $stores))->describe($job, (string) ($payload['uuid'] ?? ''));
        });
        $out['middleware'] = $middleware['middleware'] ?? [];
        $out['not_carried'] = $middleware['not_carried'] ?? ($middleware === null ? [get_class($job).'::middleware()'] : []);
        $errors = array_merge($errors, $middleware['errors'] ?? []);
        $out['unique'] = $this->part($job, 'unique', $errors, function () use ($job, $stores) {
            return (new Unique($this->app, $stores))->describe($job);
        });
        $models = new Models;
        $out['delete_when_missing_models'] = (bool) $this->part($job, 'delete_when_missing_models', $errors, function () use ($models, $job, $payload) {
            return $models->deleteWhenMissing($job, $payload);
        });
        $out['models'] = $this->part($job, 'models', $errors, function () use ($models, $job) {
            return $models->describe($job);
        });
        $out['failed'] = method_exists($job, 'failed');
        // Left out when empty: PHP has one empty value for a map and a
        // list, so `queue:retry` (json_decode to arrays, json_encode)
        // would turn {} into [], which a reader expecting a map refuses.
        if ($stores->all() !== []) {
            $out['stores'] = (object) $stores->all();
        }
        $out['errors'] = $errors;

        return self::encodable($out, get_class($job));
    }

    /**
     * Runs one part; a part that throws is recorded as null with its
     * error, and never stops the dispatch.
     */
    private function part($job, string $name, array &$errors, callable $part)
    {
        try {
            return $part();
        } catch (Throwable $e) {
            $errors[] = $name.': '.get_class($e);
            $this->warnOnce(get_class($job).' '.$name, $e);

            return null;
        }
    }

    /**
     * Laravel json_encodes the payload and refuses to queue a job whose
     * payload does not encode: a key made of invalid UTF-8 must not stop
     * the dispatch, so such metadata is replaced by an error.
     */
    private static function encodable(array $out, string $class): array
    {
        if (json_encode($out, JSON_UNESCAPED_UNICODE) !== false) {
            return $out;
        }

        return [
            'v' => self::VERSION,
            'laravel' => $out['laravel'],
            'at' => $out['at'],
            'class' => $class,
            'errors' => ['metadata: not JSON-encodable ('.json_last_error_msg().')'],
        ];
    }

    private function warnOnce(string $what, Throwable $e): void
    {
        if (isset(self::$warned[$what])) {
            return;
        }
        self::$warned[$what] = true;
        try {
            $this->app['log']->warning("laraworker: recording {$what} for the payload failed: ".get_class($e).': '.$e->getMessage());
        } catch (Throwable $ignored) {
            // No logger: the payload's errors still say it.
        }
    }
}
