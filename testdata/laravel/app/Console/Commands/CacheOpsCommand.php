<?php

namespace App\Console\Commands;

use Carbon\Carbon;
use Illuminate\Cache\RateLimiter;
use Illuminate\Console\Command;
use Illuminate\Redis\Limiters\DurationLimiter;
use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\Redis;

/**
 * Runs cache, lock and limiter operations through Laravel's own classes
 * (RateLimiter, Cache::lock, DurationLimiter), for the Go tests that
 * compare what laraworker writes with what Laravel writes
 * (worker/middleware_php_test.go).
 *
 * Reads a JSON object on stdin:
 *   now     Unix time Carbon is frozen at (the RateLimiter and the cache
 *           store read it; DatabaseLock and DurationLimiter read the clock)
 *   store   the cache store to add as "cmp": database {driver, table,
 *           lock_table, prefix} or redis {driver, connection, lock_connection, prefix}
 *   redis   connection overrides: {host, port, prefix} for "default" and "cache"
 *   ops     a list of {op, ...}: add, put, forget, hit, tooManyAttempts,
 *           availableIn, clear, lock, release, forceRelease, sleep,
 *           duration.acquire, duration.tooManyAttempts, duration.clear
 * and prints the list of the operations' results as JSON.
 */
class CacheOpsCommand extends Command
{
    protected $signature = 'app:cache-ops';

    protected $description = 'Run cache, lock and limiter operations read as JSON on stdin';

    public function handle()
    {
        $in = json_decode(stream_get_contents(STDIN), true);
        if (! is_array($in)) {
            $this->error('stdin: want a JSON object');

            return 1;
        }
        if (isset($in['redis'])) {
            foreach (['default', 'cache'] as $name) {
                config(["database.redis.{$name}.host" => $in['redis']['host'], "database.redis.{$name}.port" => $in['redis']['port']]);
            }
            config(['database.redis.options.prefix' => $in['redis']['prefix']]);
        }
        $store = $in['store'];
        config(['cache.prefix' => $store['prefix'], 'cache.stores.cmp' => $store + ['lock_lottery' => [0, 100]]]);
        if (isset($in['now'])) {
            Carbon::setTestNow(Carbon::createFromTimestamp($in['now']));
        }
        $cache = Cache::store('cmp');
        $limiter = new RateLimiter($cache);
        $out = [];
        foreach ($in['ops'] as $op) {
            $out[] = $this->runOp($op, $cache, $limiter);
        }
        $this->line(json_encode($out));

        return 0;
    }

    private function runOp(array $op, $cache, RateLimiter $limiter)
    {
        switch ($op['op']) {
            case 'add':
                return $cache->add($op['key'], $op['value'], $op['ttl']);
            case 'put':
                return $cache->put($op['key'], $op['value'], $op['ttl']);
            case 'forget':
                return $cache->forget($op['key']);
            case 'hit':
                return $limiter->hit($op['key'], $op['decay']);
            case 'tooManyAttempts':
                return $limiter->tooManyAttempts($op['key'], $op['max']);
            case 'availableIn':
                return $limiter->availableIn($op['key']);
            case 'clear':
                $limiter->clear($op['key']);

                return null;
            case 'lock':
                return $cache->lock($op['name'], $op['seconds'], $op['owner'])->get();
            case 'release':
                return $cache->restoreLock($op['name'], $op['owner'])->release();
            case 'forceRelease':
                $cache->lock($op['name'])->forceRelease();

                return null;
            case 'sleep':
                usleep($op['ms'] * 1000);

                return null;
            case 'duration.acquire':
                $l = new DurationLimiter(Redis::connection(), $op['key'], $op['max'], $op['decay']);
                $ok = $l->acquire();

                return [$ok, (int) $l->decaysAt, $l->remaining];
            case 'duration.tooManyAttempts':
                $l = new DurationLimiter(Redis::connection(), $op['key'], $op['max'], $op['decay']);
                $too = $l->tooManyAttempts();

                return [$too, (int) $l->decaysAt, $l->remaining];
            case 'duration.clear':
                (new DurationLimiter(Redis::connection(), $op['key'], $op['max'] ?? 1, $op['decay'] ?? 1))->clear();

                return null;
        }
        throw new \InvalidArgumentException('unknown op '.$op['op']);
    }
}
