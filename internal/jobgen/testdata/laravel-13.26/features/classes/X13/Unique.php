<?php

namespace App\Jobs\X13;

use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Queue\Queueable;

#[\Illuminate\Queue\Attributes\UniqueFor(120)]
class Unique implements ShouldQueue, ShouldBeUnique
{
    use Queueable;

    public function __construct(public int $n)
    {
    }

    public function handle(): void
    {
    }
}
