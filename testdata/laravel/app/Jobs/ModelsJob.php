<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use App\Models\Podcast;
use Illuminate\Database\Eloquent\Collection;

/**
 * SerializesModels: a model and a collection become ModelIdentifier objects.
 */
class ModelsJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public Podcast $podcast, public Collection $users)
    {
    }

    public function handle()
    {
        $this->recordRun([
            'podcastId' => $this->podcast->id,
            'podcastTitle' => $this->podcast->title,
            'userIds' => $this->users->pluck('id')->all(),
            'userNames' => $this->users->pluck('name')->all(),
        ]);
    }
}
