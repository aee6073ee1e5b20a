<?php

namespace App\Jobs\Audit;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\Attributes\Backoff;
use Illuminate\Queue\Attributes\Connection;
use Illuminate\Queue\Attributes\Delay;
use Illuminate\Queue\Attributes\FailOnTimeout;
use Illuminate\Queue\Attributes\MaxExceptions;
use Illuminate\Queue\Attributes\Queue;
use Illuminate\Queue\Attributes\Timeout;
use Illuminate\Queue\Attributes\Tries;
use Illuminate\Queue\Attributes\UniqueFor;
use Illuminate\Queue\Attributes\WithoutRelations;

/**
 * For `laraworker audit`: Laravel 13's queue attributes on a class (this
 * Laravel 8.83 app has none of them; PHP's reflection reads them anyway).
 */
#[Tries(3), Backoff(1, 5), Timeout(30), MaxExceptions(2), FailOnTimeout]
#[Queue('attrq'), Connection('database'), Delay(4), UniqueFor(120), WithoutRelations]
class AttributesJob implements ShouldQueue
{
    use Queueable;

    public function __construct(public int $n = 1)
    {
    }

    public function handle()
    {
    }
}
