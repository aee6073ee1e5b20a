<?php

namespace App\Jobs\Hooks;

use App\Jobs\Concerns\RecordsRun;
use App\Models\Podcast;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\RateLimited;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Queue\SerializesModels;

/**
 * Never two at once per podcast (WithoutOverlapping keyed by the model's
 * id) and at most 3 a minute per podcast (RateLimited 'podcast-sync',
 * HooksServiceProvider): the class the e2e middleware test moves to Go
 * while PHP runs some of its jobs. handle() holds the podcast for a while
 * and records when it started and ended.
 */
class PodcastSyncJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    // Every release by the middleware uses an attempt.
    public $tries = 100;

    public function __construct(public Podcast $podcast)
    {
    }

    public function middleware()
    {
        return [
            (new WithoutOverlapping($this->podcast->id))->releaseAfter(1)->expireAfter(60),
            new RateLimited('podcast-sync'),
        ];
    }

    public function handle()
    {
        $start = microtime(true);
        usleep(500 * 1000);
        $this->recordRun(['podcast' => $this->podcast->id, 'start' => $start, 'end' => microtime(true)]);
    }
}
