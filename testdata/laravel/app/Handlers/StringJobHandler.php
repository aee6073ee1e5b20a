<?php

namespace App\Handlers;

use App\Support\RunRecorder;
use Illuminate\Contracts\Queue\Job;

/**
 * Target of string jobs (Queue::push('App\Handlers\StringJobHandler@handle', $data)).
 * Unlike CallQueuedHandler nothing deletes a string job for it, so it deletes itself.
 */
class StringJobHandler
{
    public function handle(Job $job, $data)
    {
        RunRecorder::record($job, static::class, ['data' => $data]);

        $job->delete();
    }
}
