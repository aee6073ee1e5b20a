<?php

namespace App\Jobs\Hooks;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\RateLimitedWithRedis;
use Illuminate\Queue\Middleware\ThrottlesExceptionsWithRedis;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

/**
 * The Redis variants: RateLimitedWithRedis('podcasts') then
 * ThrottlesExceptionsWithRedis by a key; it throws, so the throttle's
 * DurationLimiter hash is written too.
 */
class RedisLimitedJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public int $podcastId = 7)
    {
    }

    public function middleware()
    {
        return [
            new RateLimitedWithRedis('podcasts'),
            (new ThrottlesExceptionsWithRedis(4, 2))->by('redis-feed'),
        ];
    }

    public function handle()
    {
        $this->recordRun(['podcastId' => $this->podcastId]);
        throw new RuntimeException('RedisLimitedJob failed');
    }
}
