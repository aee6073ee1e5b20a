<?php

namespace App\Jobs\X13;

use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Queue\Queueable;

#[\Illuminate\Queue\Attributes\Tries(3), \Illuminate\Queue\Attributes\Backoff(1)]
class Retry implements ShouldQueue
{
    use Queueable;

    public function __construct(public int $n)
    {
    }

    public function handle(): void
    {
    }
}
