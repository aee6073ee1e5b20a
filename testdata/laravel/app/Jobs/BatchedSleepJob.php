<?php

namespace App\Jobs;

use Illuminate\Bus\Batchable;

/**
 * SleepJob in a batch (the reliability tests' frozen worker on Redis: a
 * long job heading a chain inside a batch).
 */
class BatchedSleepJob extends SleepJob
{
    use Batchable;
}
