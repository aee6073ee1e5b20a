<?php

namespace App\Jobs\X13;

use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Queue\Queueable;

#[\Illuminate\Queue\Attributes\Tries(5), \Illuminate\Queue\Attributes\MaxExceptions(1)]
class MaxExc implements ShouldQueue
{
    use Queueable;

    public function __construct(public int $n)
    {
    }

    public function handle(): void
    {
    }
}
