<?php

namespace Laraworker\Bridge\Metadata;

use Illuminate\Cache\DatabaseStore;
use Illuminate\Cache\RedisStore;
use Illuminate\Contracts\Container\Container;
use Throwable;

/**
 * The cache stores a job's locks and limiters live in, as the metadata's
 * "stores" map describes them: by their config/cache.php name, with the
 * prefix the store itself puts before every key (DatabaseStore: the cache
 * prefix as is; RedisStore: with ":" appended on 8-10), so that
 * prefix . key is the cache table's `key` column, or the Redis key before
 * the Redis client's own prefix.
 */
final class Stores
{
    /** @var Container */
    private $app;

    /** @var array<string, array> name => description */
    private $described = [];

    public function __construct(Container $app)
    {
        $this->app = $app;
    }

    /**
     * Names and describes the store behind a cache Repository: the name
     * the cache manager resolved it under, else $hint (the config name the
     * caller knows it comes from). Returns [name, store prefix].
     *
     * @return array{0: string, 1: string}
     */
    public function add($repository, ?string $hint): array
    {
        $name = $this->nameOf($repository) ?? $hint ?? '';
        $store = method_exists($repository, 'getStore') ? $repository->getStore() : null;
        $prefix = $store !== null && method_exists($store, 'getPrefix') ? (string) $store->getPrefix() : '';
        if (! isset($this->described[$name])) {
            $this->described[$name] = $this->describe($name, $store, $prefix);
        }

        return [$name, $prefix];
    }

    /**
     * The default store (Cache::lock() of WithoutOverlapping, UniqueLock
     * without uniqueVia()).
     */
    public function defaultName(): ?string
    {
        $name = $this->app['config']->get('cache.default');

        return is_string($name) ? $name : null;
    }

    /**
     * The RateLimiter's store: cache.limiter, else the default
     * (CacheServiceProvider).
     */
    public function limiterName(): ?string
    {
        $name = $this->app['config']->get('cache.limiter');

        return is_string($name) && $name !== '' ? $name : $this->defaultName();
    }

    /**
     * @return array<string, array>
     */
    public function all(): array
    {
        return $this->described;
    }

    /**
     * The name the cache manager keeps this repository under (Repository
     * has no name before 10.x, so it is looked up by identity).
     */
    private function nameOf($repository): ?string
    {
        try {
            if (method_exists($repository, 'getName') && is_string($name = $repository->getName()) && $name !== '') {
                return $name;
            }
            foreach ((array) Peek::prop($this->app['cache'], 'stores', []) as $name => $resolved) {
                if ($resolved === $repository) {
                    return (string) $name;
                }
            }
        } catch (Throwable $e) {
            // Unnamed: the caller's hint.
        }

        return null;
    }

    private function describe(string $name, $store, string $prefix): array
    {
        $driver = $this->app['config']->get("cache.stores.{$name}.driver");
        $out = ['driver' => is_string($driver) ? $driver : null, 'prefix' => $prefix];
        if ($store instanceof DatabaseStore) {
            $connection = Peek::prop($store, 'connection');
            $lockConnection = Peek::prop($store, 'lockConnection') ?? $connection;
            $out += [
                'connection' => self::connectionName($connection),
                'table' => self::tablePrefix($connection).Peek::prop($store, 'table'),
                'lock_connection' => self::connectionName($lockConnection),
                'lock_table' => self::tablePrefix($lockConnection).Peek::prop($store, 'lockTable', 'cache_locks'),
                'lock_timeout' => (int) Peek::prop($store, 'defaultLockTimeoutInSeconds', 86400),
            ];
        } elseif ($store instanceof RedisStore) {
            $connection = Peek::prop($store, 'connection');
            $out += [
                'connection' => is_string($connection) ? $connection : null,
                'lock_connection' => is_string($lock = Peek::prop($store, 'lockConnection')) ? $lock : (is_string($connection) ? $connection : null),
            ];
        }

        return $out;
    }

    private static function connectionName($connection): ?string
    {
        return is_object($connection) && method_exists($connection, 'getName') ? $connection->getName() : null;
    }

    private static function tablePrefix($connection): string
    {
        return is_object($connection) && method_exists($connection, 'getTablePrefix') ? (string) $connection->getTablePrefix() : '';
    }
}
