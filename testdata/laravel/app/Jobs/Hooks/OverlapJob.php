<?php

namespace App\Jobs\Hooks;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Queue\SerializesModels;
use Illuminate\Support\Facades\DB;

/**
 * WithoutOverlapping keyed by a podcast id (middleware()), plus whatever
 * ->through() adds: handle() records the cache_locks keys held while it
 * runs, which are the locks the middleware took.
 */
class OverlapJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public int $podcastId = 7)
    {
    }

    public function middleware()
    {
        return [(new WithoutOverlapping($this->podcastId))->releaseAfter(5)->expireAfter(120)];
    }

    public function handle()
    {
        $this->recordRun(['locks' => DB::table('cache_locks')->orderBy('key')->pluck('key')->all()]);
    }
}
