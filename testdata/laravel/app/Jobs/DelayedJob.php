<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * Dispatched with ->onQueue(...)->delay(...): checks available_at and queue routing.
 */
class DelayedJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public int $podcastId = 42)
    {
    }

    public function handle()
    {
        $this->recordRun(['podcastId' => $this->podcastId, 'queue' => $this->job->getQueue()]);
    }
}
