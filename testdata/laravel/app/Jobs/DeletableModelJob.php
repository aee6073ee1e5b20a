<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use App\Models\Podcast;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * SerializesModels with $deleteWhenMissingModels: when the podcast is gone before the job
 * runs, CallQueuedHandler deletes the job without running it and without a failure.
 */
class DeletableModelJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $deleteWhenMissingModels = true;

    public function __construct(public Podcast $podcast)
    {
    }

    public function handle()
    {
        $this->recordRun(['podcastId' => $this->podcast->id]);
    }
}
