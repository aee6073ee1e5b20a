<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

/**
 * Always throws. tries=10 but maxExceptions=2, so the second exception fails it
 * (the counter lives in the cache under job-exceptions:<uuid>).
 */
class MaxExceptionsJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $tries = 10;

    public $maxExceptions = 2;

    public $backoff = 0;

    public function handle()
    {
        $this->recordRun();

        throw new RuntimeException('MaxExceptionsJob always throws');
    }
}
