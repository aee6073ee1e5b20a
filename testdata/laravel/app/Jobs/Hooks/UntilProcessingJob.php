<?php

namespace App\Jobs\Hooks;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * ShouldBeUniqueUntilProcessing with a uniqueId property and no uniqueFor
 * (the lock never expires: 0).
 */
class UntilProcessingJob implements ShouldQueue, ShouldBeUniqueUntilProcessing
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $uniqueId;

    public function __construct(string $id = 'feed-9')
    {
        $this->uniqueId = $id;
    }

    public function handle()
    {
        $this->recordRun(['uniqueId' => $this->uniqueId]);
    }
}
