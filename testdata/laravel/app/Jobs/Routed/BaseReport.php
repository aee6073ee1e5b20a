<?php

namespace App\Jobs\Routed;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * A parent class for the bridge's route matching (routes may name parents).
 */
abstract class BaseReport implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function handle()
    {
        $this->recordRun(['queue' => $this->job->getQueue()]);
    }
}
