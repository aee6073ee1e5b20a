<?php

namespace Laraworker\Bridge\Metadata;

use Illuminate\Bus\UniqueLock;
use Illuminate\Contracts\Cache\Repository as Cache;
use Illuminate\Contracts\Container\Container;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing;
use Laraworker\Bridge\Laravel;

/**
 * A ShouldBeUnique job's lock: the key UniqueLock builds for this Laravel
 * version (its own getKey() from 9.x; 8.x builds it inline, in the form
 * copied below), the store it lives in (uniqueVia(), else the default
 * store), uniqueFor, and the owner 13.24+ keeps on the job.
 */
final class Unique
{
    /** @var Container */
    private $app;

    /** @var Stores */
    private $stores;

    public function __construct(Container $app, Stores $stores)
    {
        $this->app = $app;
        $this->stores = $stores;
    }

    public function describe($job): ?array
    {
        if (! $job instanceof ShouldBeUnique) {
            return null;
        }
        $default = $this->app->make(Cache::class);
        $repository = method_exists($job, 'uniqueVia') ? ($job->uniqueVia() ?? $default) : $default;
        [$store, $prefix] = $this->stores->add($repository, $repository === $default ? $this->stores->defaultName() : null);
        $key = $this->key($job, $repository);

        return [
            'until_processing' => $job instanceof ShouldBeUniqueUntilProcessing,
            'id' => (string) $this->uniqueId($job),
            'key' => $key,
            'cache_key' => $prefix.$key,
            'store' => $store,
            'unique_for' => (int) $this->uniqueFor($job, $repository),
            'owner' => is_string($owner = $job->uniqueLockOwner ?? null) && $owner !== '' ? $owner : null,
        ];
    }

    private function key($job, $repository): string
    {
        if (method_exists(UniqueLock::class, 'getKey')) {
            return (string) Peek::call(new UniqueLock($repository), 'getKey', $job);
        }

        // 8.x: UniqueLock::acquire and CallQueuedHandler build it inline.
        return 'laravel_unique_job:'.get_class($job).$this->uniqueId($job);
    }

    private function uniqueId($job)
    {
        return method_exists($job, 'uniqueId') ? $job->uniqueId() : ($job->uniqueId ?? '');
    }

    /**
     * 8.x reads the property only; 9.1+ prefers the method; 13.0+ also
     * reads #[UniqueFor] (UniqueLock's own attribute reader).
     */
    private function uniqueFor($job, $repository)
    {
        if (Laravel::atLeast('9.1.0') && method_exists($job, 'uniqueFor')) {
            return $job->uniqueFor();
        }
        if (Laravel::atLeast('13.0.0') && method_exists(UniqueLock::class, 'getAttributeValue')) {
            return Peek::call(new UniqueLock($repository), 'getAttributeValue', $job, 'Illuminate\\Queue\\Attributes\\UniqueFor', 'uniqueFor') ?? 0;
        }

        return $job->uniqueFor ?? 0;
    }
}
