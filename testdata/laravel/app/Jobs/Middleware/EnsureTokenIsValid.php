<?php

namespace App\Jobs\Middleware;

/**
 * A job middleware of the app's own (for `laraworker audit`): PHP code that
 * Go cannot run.
 */
class EnsureTokenIsValid
{
    public function handle($job, $next)
    {
        return $next($job);
    }
}
