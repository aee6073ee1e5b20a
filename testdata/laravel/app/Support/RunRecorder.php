<?php

namespace App\Support;

use Illuminate\Contracts\Queue\Job;
use Illuminate\Support\Facades\DB;

/**
 * Writes one `job_runs` row per handled job so an end-to-end test can see
 * which worker ran what, on which attempt, and which values PHP deserialized.
 */
class RunRecorder
{
    public static function record(?Job $job, string $class, array $result): void
    {
        DB::table('job_runs')->insert([
            'uuid' => $job ? $job->uuid() : null,
            'class' => $class,
            'attempt' => $job ? $job->attempts() : 0,
            'worker' => env('WORKER_NAME', 'php'),
            'result' => json_encode((object) $result, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION),
            'created_at' => now(),
        ]);
    }
}
