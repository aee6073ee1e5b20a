<?php

namespace App\Jobs\Audit;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\Attributes\DebounceFor;
use Illuminate\Support\Facades\Cache;

/**
 * For `laraworker audit`: #[DebounceFor] whose key id and store come from
 * methods, which no payload carries.
 */
#[DebounceFor(10)]
class DebouncedViaJob implements ShouldQueue
{
    use Queueable;

    public function __construct(public int $userId = 1)
    {
    }

    public function debounceId(): string
    {
        return 'user-'.$this->userId;
    }

    public function debounceVia()
    {
        return Cache::store('database');
    }

    public function handle()
    {
    }
}
