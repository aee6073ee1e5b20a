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
 * Throws on every run; with the default --tries=1 it lands in failed_jobs at once.
 * $note holds non-ASCII text: queue:retry re-encodes it as \u00e9 in the payload.
 */
class FailingJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public int $podcastId = 42, public string $note = 'café ✗')
    {
    }

    public function handle()
    {
        $this->recordRun(['podcastId' => $this->podcastId, 'note' => $this->note]);

        throw new RuntimeException("Podcast {$this->podcastId} could not be processed ✗");
    }
}
