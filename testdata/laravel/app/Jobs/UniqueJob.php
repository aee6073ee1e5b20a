<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * ShouldBeUnique: dispatch() takes the lock laravel_unique_job:App\Jobs\UniqueJob<productId>
 * (8.x form, no ':') in the database cache store's cache_locks for $uniqueFor seconds; while it
 * is held, another dispatch of the same productId is dropped. The worker releases it.
 */
class UniqueJob implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public $uniqueFor = 600;

    public function __construct(public int $productId = 1)
    {
    }

    public function uniqueId()
    {
        return (string) $this->productId;
    }

    public function handle()
    {
        $this->recordRun(['productId' => $this->productId]);
    }
}
