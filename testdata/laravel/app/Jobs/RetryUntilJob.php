<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * retryUntil() as a method: queue:retry recomputes payload.retryUntil from it.
 */
class RetryUntilJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $tries = 3;

    public function __construct(public int $minutes = 10)
    {
    }

    public function retryUntil()
    {
        return now()->addMinutes($this->minutes);
    }

    public function handle()
    {
        $this->recordRun(['minutes' => $this->minutes]);
    }
}
