<?php

namespace App\Jobs\Audit;

use App\Jobs\Concerns\RecordsRun;
use App\Jobs\Middleware\EnsureTokenIsValid;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\RateLimited;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Queue\SerializesModels;

/**
 * For `laraworker audit`: Laravel's standard middleware (WithoutOverlapping
 * keyed by the customer, RateLimited by a named limiter), a custom
 * middleware class and a closure middleware.
 */
class MiddlewareJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $tries = 5;

    public function __construct(public int $customerId = 7, public array $lines = [])
    {
    }

    public function middleware()
    {
        return [
            (new WithoutOverlapping($this->customerId))->releaseAfter(10),
            new RateLimited('customer-api'),
            new EnsureTokenIsValid,
            function ($job, $next) {
                return $next($job);
            },
        ];
    }

    public function handle()
    {
        $this->recordRun(['customerId' => $this->customerId]);
    }
}
