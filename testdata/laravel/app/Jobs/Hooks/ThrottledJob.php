<?php

namespace App\Jobs\Hooks;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\ThrottlesExceptions;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

/**
 * Always throws, so its ThrottlesExceptions hits the limiter (and releases
 * it): the key is by('...'), byJob(), the class (default) or, with a when()
 * callback, not carried. One middleware per job: an outer one would clear
 * its key when the inner one swallows the exception.
 */
class ThrottledJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public string $mode = 'by')
    {
    }

    public function middleware()
    {
        $m = (new ThrottlesExceptions(3, 5))->backoff(2);
        switch ($this->mode) {
            case 'by':
                return [$m->by('feed:Ünïcode & co')];
            case 'job':
                return [$m->byJob()];
            case 'when':
                return [$m->when(fn ($e) => $e instanceof RuntimeException)];
        }

        return [$m];
    }

    public function handle()
    {
        $this->recordRun(['mode' => $this->mode]);
        throw new RuntimeException("ThrottledJob {$this->mode} failed");
    }
}
