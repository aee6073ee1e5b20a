<?php

namespace Laraworker\Bridge\Metadata;

use Closure;
use DateInterval;
use DateTimeInterface;
use Illuminate\Cache\RateLimiter;
use Illuminate\Cache\RateLimiting\Unlimited;
use Illuminate\Contracts\Cache\Repository as Cache;
use Illuminate\Contracts\Container\Container;
use Illuminate\Support\Arr;
use Throwable;

/**
 * The job's middleware as data: for each entry of middleware() and of the
 * $middleware property (the order CallQueuedHandler runs them), the
 * settings of Laravel's standard middleware with the keys computed by the
 * app's own Laravel code, or, for anything else, its class under
 * not_carried. middleware() is evaluated here, at dispatch, on the object
 * being dispatched; PHP evaluates it again on every attempt.
 */
final class Middleware
{
    private const NS = 'Illuminate\\Queue\\Middleware\\';

    /** @var Container */
    private $app;

    /** @var Stores */
    private $stores;

    public function __construct(Container $app, Stores $stores)
    {
        $this->app = $app;
        $this->stores = $stores;
    }

    /**
     * @return array{middleware: list<array>, not_carried: list<string>, errors: list<string>}
     */
    public function describe($job, string $uuid): array
    {
        $out = ['middleware' => [], 'not_carried' => [], 'errors' => []];
        $entries = [];
        if (method_exists($job, 'middleware')) {
            try {
                $list = $job->middleware();
                if (! is_array($list)) {
                    // CallQueuedHandler's array_merge fails such a job.
                    throw new \UnexpectedValueException('not an array');
                }
                foreach ($list as $m) {
                    $entries[] = [$m, 'method'];
                }
            } catch (Throwable $e) {
                $out['errors'][] = 'middleware(): '.get_class($e);
                $out['not_carried'][] = get_class($job).'::middleware()';
            }
        }
        $property = $job->middleware ?? [];
        foreach (is_array($property) ? $property : [] as $m) {
            $entries[] = [self::asUnserialized($m), 'property'];
        }
        foreach ($entries as [$m, $source]) {
            $entry = $this->entry($m, $job, $uuid);
            $entry['source'] = $source;
            if ($entry['type'] === 'other') {
                $out['not_carried'][] = $entry['class'];
            }
            $out['middleware'][] = $entry;
        }

        return $out;
    }

    /**
     * The $middleware property reaches the worker serialized: describe the
     * copy the worker will see (RateLimited's __sleep drops releaseAfter on
     * 12.13 to 13.17, say).
     */
    private static function asUnserialized($m)
    {
        if (! is_object($m) || $m instanceof Closure) {
            return $m;
        }
        try {
            return unserialize(serialize($m));
        } catch (Throwable $e) {
            return $m;
        }
    }

    private function entry($m, $job, string $uuid): array
    {
        if (is_string($m)) {
            return self::other($m, 'a middleware class name, resolved by the container in the worker');
        }
        if ($m instanceof Closure) {
            return self::other('Closure', 'a closure');
        }
        if (! is_object($m)) {
            return self::other(gettype($m), 'not a middleware object');
        }
        $class = get_class($m);
        try {
            switch ($class) {
                case self::NS.'WithoutOverlapping':
                    return $this->withoutOverlapping($m, $job);
                case self::NS.'RateLimited':
                case self::NS.'RateLimitedWithRedis':
                    return $this->rateLimited($m, $job);
                case self::NS.'ThrottlesExceptions':
                case self::NS.'ThrottlesExceptionsWithRedis':
                    return $this->throttlesExceptions($m, $job, $uuid);
                case self::NS.'Skip':
                    return ['type' => 'Skip', 'class' => $class, 'skip' => (bool) Peek::prop($m, 'skip', false)];
                case self::NS.'SkipIfBatchCancelled':
                    return ['type' => 'SkipIfBatchCancelled', 'class' => $class];
                case self::NS.'Release':
                    return ['type' => 'Release', 'class' => $class, 'release' => (bool) Peek::prop($m, 'release', false),
                        'release_after' => (int) Peek::prop($m, 'releaseAfter', 0)];
            }
        } catch (Throwable $e) {
            return self::other($class, 'reading it failed: '.get_class($e));
        }
        $reason = 'custom middleware';
        foreach (class_parents($m) ?: [] as $parent) {
            if (strpos($parent, self::NS) === 0) {
                $reason = 'extends '.$parent.' (it may change what it does)';
                break;
            }
        }

        return self::other($class, $reason);
    }

    private static function other(string $class, string $reason): array
    {
        return ['type' => 'other', 'class' => $class, 'reason' => $reason];
    }

    /**
     * WithoutOverlapping: Cache::lock(getLockKey($job), expiresAfter) on
     * the default store.
     */
    private function withoutOverlapping($m, $job): array
    {
        [$store, $prefix] = $this->stores->add($this->app->make(Cache::class), $this->stores->defaultName());
        $key = (string) $m->getLockKey($job);

        return [
            'type' => 'WithoutOverlapping',
            'class' => get_class($m),
            'key' => $key,
            'cache_key' => $prefix.$key,
            'store' => $store,
            'release_after' => self::seconds($m->releaseAfter),
            'release_at' => $m->releaseAfter instanceof DateTimeInterface ? $m->releaseAfter->getTimestamp() : null,
            'dont_release' => $m->releaseAfter === null,
            'expires_after' => (int) $m->expiresAfter,
            'shared' => (bool) ($m->shareKey ?? false),
        ];
    }

    /**
     * RateLimited(WithRedis): the named limiter's closure, called now with
     * this job, each Limit keyed md5(limiterName . key) as the middleware
     * does.
     */
    private function rateLimited($m, $job): array
    {
        $redis = get_class($m) === self::NS.'RateLimitedWithRedis';
        $limiter = Peek::prop($m, 'limiter') ?? $this->app->make(RateLimiter::class);
        $name = (string) Peek::prop($m, 'limiterName');
        $releaseAfter = Peek::prop($m, 'releaseAfter');
        $out = [
            'type' => $redis ? 'RateLimitedWithRedis' : 'RateLimited',
            'class' => get_class($m),
            'limiter' => $name,
            'registered' => false,
            'unlimited' => false,
            'limits' => [],
            'release' => (bool) $m->shouldRelease,
            'release_after' => $releaseAfter ? self::seconds($releaseAfter) : null,
        ];
        if ($redis) {
            $out['redis_connection'] = Peek::prop($m, 'connectionName') ?? 'default';
        } else {
            [$store, $prefix] = $this->stores->add(Peek::prop($limiter, 'cache'), $this->stores->limiterName());
            $out['store'] = $store;
        }
        $callback = $limiter->limiter($name);
        if ($callback === null) {
            return $out;
        }
        $out['registered'] = true;
        $response = call_user_func($callback, $job);
        if ($response instanceof Unlimited) {
            $out['unlimited'] = true;

            return $out;
        }
        foreach (Arr::wrap($response) as $limit) {
            $key = md5($name.$limit->key);
            $entry = ['key' => $key];
            if (! $redis) {
                $entry['key'] = $key = $limiter->cleanRateLimiterKey($key);
                $entry['cache_key'] = $prefix.$key;
            }
            $out['limits'][] = $entry + [
                'max_attempts' => (int) $limit->maxAttempts,
                'decay_seconds' => self::limitDecay($limit),
            ];
        }

        return $out;
    }

    /**
     * ThrottlesExceptions(WithRedis): getKey() as the middleware builds it
     * (byJob needs the job's uuid, which is the payload's).
     */
    private function throttlesExceptions($m, $job, string $uuid): array
    {
        $redis = get_class($m) === self::NS.'ThrottlesExceptionsWithRedis';
        $callbacks = [];
        foreach (['whenCallback' => 'when', 'reportCallback' => 'report', 'deleteWhenCallbacks' => 'deleteWhen', 'failWhenCallbacks' => 'failWhen'] as $prop => $name) {
            if (! empty(Peek::prop($m, $prop))) {
                $callbacks[] = $name.'()';
            }
        }
        $backoff = Peek::prop($m, 'retryAfterMinutes', 0);
        if ($backoff instanceof Closure) {
            $callbacks[] = 'backoff(closure)';
        }
        if ($callbacks !== []) {
            return self::other(get_class($m), 'has '.implode(', ', $callbacks).': PHP code');
        }
        $by = Peek::prop($m, 'key');
        $byJob = (bool) Peek::prop($m, 'byJob', false);
        $key = (! $by && $byJob)
            ? Peek::prop($m, 'prefix').$uuid
            : (string) Peek::call($m, 'getKey', $job);
        $decay = property_exists($m, 'decaySeconds')
            ? (int) Peek::prop($m, 'decaySeconds')
            : (int) round(Peek::prop($m, 'decayMinutes') * 60);
        $out = [
            'type' => $redis ? 'ThrottlesExceptionsWithRedis' : 'ThrottlesExceptions',
            'class' => get_class($m),
            'key' => $key,
        ];
        if ($redis) {
            $out['redis_connection'] = Peek::prop($m, 'connectionName') ?? 'default';
        } else {
            $limiter = $this->app->make(RateLimiter::class);
            [$store, $prefix] = $this->stores->add(Peek::prop($limiter, 'cache'), $this->stores->limiterName());
            $out['key'] = $key = $limiter->cleanRateLimiterKey($key);
            $out['cache_key'] = $prefix.$key;
            $out['store'] = $store;
        }

        return $out + [
            'max_attempts' => (int) Peek::prop($m, 'maxAttempts'),
            'decay_seconds' => $decay,
            'backoff_seconds' => (int) round($backoff * 60),
            'by' => $by === null ? null : (string) $by,
            'by_job' => $byJob,
        ];
    }

    /**
     * A Limit's decay in seconds: decaySeconds since 11.0, decayMinutes
     * before.
     */
    private static function limitDecay($limit): int
    {
        return property_exists($limit, 'decaySeconds')
            ? (int) $limit->decaySeconds
            : (int) round($limit->decayMinutes * 60);
    }

    /**
     * A release delay as Job::release() takes it: seconds, a DateInterval
     * (seconds from now) or a DateTime (then release_at says when).
     */
    private static function seconds($delay): ?int
    {
        if ($delay === null || $delay instanceof DateTimeInterface) {
            return null;
        }
        if ($delay instanceof DateInterval) {
            $now = new \DateTimeImmutable;

            return max(0, $now->add($delay)->getTimestamp() - $now->getTimestamp());
        }

        return (int) $delay;
    }
}
