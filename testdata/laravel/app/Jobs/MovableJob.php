<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Batchable;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * The class the end-to-end test moves from PHP to Go: dispatched plain,
 * delayed, pushed with Queue::push, as a chain link and as a batch member.
 */
class MovableJob implements ShouldQueue
{
    use Batchable, Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public string $label = 'plain')
    {
    }

    public function handle()
    {
        $this->recordRun(['label' => $this->label, 'queue' => $this->job->getQueue()]);
    }
}
