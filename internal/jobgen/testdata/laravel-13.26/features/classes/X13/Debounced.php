<?php

namespace App\Jobs\X13;

use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Queue\Queueable;

#[\Illuminate\Queue\Attributes\DebounceFor(3)]
class Debounced implements ShouldQueue
{
    use Queueable;

    public function __construct(public int $n)
    {
    }

    public function handle(): void
    {
    }
}
