<?php

namespace App\Jobs\Hooks;

use App\Jobs\Concerns\RecordsRun;
use App\Jobs\Middleware\CountsRuns;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Queue\SerializesModels;

/**
 * Middleware a Go worker cannot run (a custom class, a closure) between
 * standard ones, and more through ->through() (the $middleware property).
 */
class MixedMiddlewareJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function middleware()
    {
        return [
            new CountsRuns,
            function ($job, $next) {
                return $next($job);
            },
            (new WithoutOverlapping('mixed'))->dontRelease(),
        ];
    }

    public function handle()
    {
        $this->recordRun();
    }
}
