<?php

namespace App\Jobs\Hooks;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\ThrottlesExceptions;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

/**
 * Always throws; ThrottlesExceptions(3, 1) by('flaky-feed') (8.x: 3
 * exceptions a minute) swallows the exceptions and, once 3 are counted,
 * holds every job of the key back until the minute is over: the e2e test
 * checks that PHP and Go count in one budget.
 */
class FlakyFeedJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $tries = 20;

    public function middleware()
    {
        return [(new ThrottlesExceptions(3, 1))->by('flaky-feed')];
    }

    public function handle()
    {
        $this->recordRun(['start' => microtime(true)]);
        throw new RuntimeException('the feed is down');
    }
}
