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
 * Declares its retry options as property defaults; throws while attempts() <= $failUntil.
 * dispatch() writes maxTries 3 and backoff "0" into the payload from them.
 */
class DeclaredRetryJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $tries = 3;

    public $backoff = [0];

    public $maxExceptions = 3;

    public function __construct(public int $failUntil = 0)
    {
    }

    public function handle()
    {
        $attempt = $this->job->attempts();
        $this->recordRun(['attempt' => $attempt, 'failUntil' => $this->failUntil]);
        if ($attempt <= $this->failUntil) {
            throw new RuntimeException("DeclaredRetryJob: failing attempt $attempt");
        }
    }
}
