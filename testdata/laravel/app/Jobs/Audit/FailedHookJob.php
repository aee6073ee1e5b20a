<?php

namespace App\Jobs\Audit;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;
use Throwable;

/**
 * For `laraworker audit`: a failed() hook, a backoff() method and a nullable
 * Carbon. Throws when $fail is set; failed() records that it ran.
 */
class FailedHookJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $tries = 2;

    public ?\Carbon\Carbon $notBefore = null;

    public function __construct(public string $recipient = 'ops@example.com', public bool $fail = false)
    {
    }

    public function backoff()
    {
        return [5, 30];
    }

    public function handle()
    {
        $this->recordRun(['recipient' => $this->recipient]);
        if ($this->fail) {
            throw new RuntimeException('FailedHookJob failed on purpose');
        }
    }

    public function failed(Throwable $e)
    {
        $this->recordRun(['failed' => $e->getMessage()]);
    }
}
