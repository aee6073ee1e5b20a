<?php

namespace App\Jobs\Hooks;

use App\Models\Podcast;
use App\Support\RunRecorder;
use Illuminate\Bus\Batchable;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use Throwable;

/**
 * A class with failed(): the failure hooks' tests fail it "in Go" and check
 * that failed() ran once, with what exception, on a fresh command (the
 * $touched flag set by handle() is gone), after the batch and chain
 * callbacks and before JobFailed.
 */
class HookedJob implements ShouldQueue
{
    use Batchable, Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $touched = false;

    public function __construct(public string $label = 'hooked', public ?Podcast $podcast = null)
    {
    }

    public function handle()
    {
        $this->touched = true;
        RunRecorder::record($this->job, static::class, ['label' => $this->label]);
    }

    public function failed(Throwable $e)
    {
        RunRecorder::record(null, 'failed:'.static::class, [
            'label' => $this->label,
            'touched' => $this->touched,
            'podcastId' => $this->podcast ? $this->podcast->id : null,
            'exception' => get_class($e),
            'message' => $e->getMessage(),
            'goClass' => $e->goClass ?? null,
        ]);
    }
}
