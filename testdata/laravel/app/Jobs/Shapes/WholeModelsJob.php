<?php

namespace App\Jobs\Shapes;

use App\Jobs\Concerns\RecordsRun;
use App\Models\Podcast;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Database\Eloquent\Collection as EloquentCollection;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Support\Collection;

/**
 * Without SerializesModels (before Laravel 11, Queueable does not bring it)
 * models and their collections travel whole, as serialize() writes any
 * object: no ModelIdentifier, no reload before handle().
 */
class WholeModelsJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, RecordsRun;

    public function __construct(public Podcast $podcast, public EloquentCollection $users, public Collection $mixed)
    {
    }

    public function handle()
    {
        $this->recordRun(['podcast' => $this->podcast->id]);
    }
}
