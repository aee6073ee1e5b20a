<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * Every payload-level option a job class can declare as a property.
 */
class OptionsJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $tries = 5;

    public $maxExceptions = 3;

    public $backoff = [1, 5, 10];

    public $timeout = 30;

    public $failOnTimeout = true;

    // 2100-01-01T00:00:00Z: fixed so the fixture is reproducible. A set retryUntil
    // makes the worker ignore maxTries.
    public $retryUntil = 4102444800;

    public function __construct(public int $podcastId = 42)
    {
    }

    public function handle()
    {
        $this->recordRun(['podcastId' => $this->podcastId]);
    }
}
