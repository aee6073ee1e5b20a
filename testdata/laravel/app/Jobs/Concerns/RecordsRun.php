<?php

namespace App\Jobs\Concerns;

use App\Support\RunRecorder;

/**
 * Only a method, no properties: a trait property would change the serialized shape.
 */
trait RecordsRun
{
    protected function recordRun(array $result = []): void
    {
        RunRecorder::record($this->job, static::class, $result);
    }
}
