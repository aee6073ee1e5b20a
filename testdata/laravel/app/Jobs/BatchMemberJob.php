<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use Illuminate\Bus\Batchable;
use RuntimeException;

/**
 * A Bus::batch member; $fail makes it throw so batch failure paths can be exercised.
 */
class BatchMemberJob implements ShouldQueue
{
    use Batchable, Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public int $n, public bool $fail = false)
    {
    }

    public function handle()
    {
        if ($this->batch() && $this->batch()->cancelled()) {
            $this->recordRun(['n' => $this->n, 'batchId' => $this->batchId, 'skipped' => 'cancelled']);

            return;
        }

        $this->recordRun(['n' => $this->n, 'batchId' => $this->batchId]);

        if ($this->fail) {
            throw new RuntimeException("Batch member {$this->n} failed");
        }
    }
}
