<?php

namespace App\Jobs\Middleware;

/**
 * A custom job middleware: PHP code a Go worker cannot run.
 */
class CountsRuns
{
    public function handle($job, $next)
    {
        return $next($job);
    }
}
