<?php

namespace App\Jobs\Hooks;

use App\Support\RunRecorder;
use Illuminate\Contracts\Queue\Job;
use Throwable;

/**
 * A Class@method string job's handler with failed($data, $e, $uuid), as
 * Job::failed calls it.
 */
class StringHandler
{
    public function handle(Job $job, $data)
    {
        RunRecorder::record($job, static::class, ['data' => $data]);
        $job->delete();
    }

    public function failed($data, Throwable $e, string $uuid)
    {
        RunRecorder::record(null, 'failed:'.static::class, ['data' => $data, 'uuid' => $uuid, 'exception' => get_class($e), 'message' => $e->getMessage()]);
    }
}
