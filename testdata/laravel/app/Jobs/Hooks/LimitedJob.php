<?php

namespace App\Jobs\Hooks;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\RateLimited;
use Illuminate\Queue\SerializesModels;

/**
 * RateLimited('podcasts') (two limits, HooksServiceProvider), a limiter
 * that returns Limit::none(), one that is not registered, and a
 * dontRelease() copy.
 */
class LimitedJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public int $podcastId = 7)
    {
    }

    public function middleware()
    {
        return [
            new RateLimited('podcasts'),
            new RateLimited('unlimited'),
            new RateLimited('nobody-registered-this'),
            (new RateLimited('per-class'))->dontRelease(),
        ];
    }

    public function handle()
    {
        $this->recordRun(['podcastId' => $this->podcastId]);
    }
}
