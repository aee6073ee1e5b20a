<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * Sleeps longer than its own timeout; failOnTimeout makes the timeout fail it.
 */
class SleepJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $timeout = 2;

    public $failOnTimeout = true;

    public function __construct(public int $seconds = 5)
    {
    }

    public function handle()
    {
        $this->recordRun(['seconds' => $this->seconds, 'phase' => 'start']);
        sleep($this->seconds);
        $this->recordRun(['seconds' => $this->seconds, 'phase' => 'end']);
    }
}
