<?php

namespace App\Jobs\Audit;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\Attributes\DebounceFor;

/**
 * For `laraworker audit`: #[DebounceFor] (Laravel 13.6+) with the id in a
 * public property, which the payload carries.
 */
#[DebounceFor(3, maxWait: 30)]
class DebouncedJob implements ShouldQueue
{
    use Queueable;

    public function __construct(public int $n = 1, public string $debounceId = '')
    {
    }

    public function handle()
    {
    }
}
