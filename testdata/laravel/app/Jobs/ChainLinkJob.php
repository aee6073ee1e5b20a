<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * One link of a Bus::chain.
 */
class ChainLinkJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public int $step, public string $label)
    {
    }

    public function handle()
    {
        $this->recordRun([
            'step' => $this->step,
            'label' => $this->label,
            'queue' => $this->job->getQueue(),
            'remaining' => count($this->chained),
        ]);
    }
}
