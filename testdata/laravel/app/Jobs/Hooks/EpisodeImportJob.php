<?php

namespace App\Jobs\Hooks;

use App\Models\Podcast;
use App\Support\RunRecorder;
use Illuminate\Bus\Batchable;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\RateLimited;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Queue\SerializesModels;
use RuntimeException;
use Throwable;

/**
 * Everything at once, the class the combined e2e test moves to Go
 * (e2e/moveall_test.go): failed(), never two at once per podcast
 * (WithoutOverlapping keyed by the model's id), at most 8 a minute in all
 * (RateLimited 'episode-import', HooksServiceProvider), a member of
 * batches with then/catch/finally. handle() takes a while, records when it
 * started and ended, and throws when $fails is set.
 */
class EpisodeImportJob implements ShouldQueue
{
    use Batchable, Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    // Every release by the middleware uses an attempt; the first exception
    // fails the job (maxExceptions), so a job fails once, when it throws.
    public $tries = 100;

    public $maxExceptions = 1;

    public function __construct(public Podcast $podcast, public string $label, public bool $fails = false)
    {
    }

    public function middleware()
    {
        return [
            (new WithoutOverlapping($this->podcast->id))->releaseAfter(1)->expireAfter(10),
            new RateLimited('episode-import'),
        ];
    }

    public function handle()
    {
        $start = microtime(true);
        usleep(300 * 1000);
        RunRecorder::record($this->job, static::class, [
            'label' => $this->label, 'fails' => $this->fails, 'start' => $start, 'end' => microtime(true),
        ]);
        if ($this->fails) {
            throw new RuntimeException("episode {$this->label} failed in PHP");
        }
    }

    public function failed(Throwable $e)
    {
        RunRecorder::record(null, 'failed:'.static::class, [
            'label' => $this->label,
            'exception' => get_class($e),
            'message' => $e->getMessage(),
        ]);
    }
}
