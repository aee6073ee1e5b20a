<?php

namespace Laraworker\Bridge;

use Illuminate\Container\Container;
use Illuminate\Contracts\Queue\Job as JobContract;
use Illuminate\Queue\Jobs\Job;

/**
 * A queue job a Go worker ran and failed, as the failure hooks see it:
 * the JobFailed event's $job, and $this->job in the command's failed() on
 * 12.12+. It reports the payload exactly as it was in the jobs table, its
 * uuid, connection, queue, id and attempts; it is already deleted and
 * failed (Go did both), so delete(), release() and fail() change nothing.
 */
class GoQueueJob extends Job implements JobContract
{
    /** @var string */
    protected $rawBody;

    /** @var int|string|null */
    protected $jobId;

    /** @var int */
    protected $attemptCount;

    public function __construct(Container $container, string $rawBody, ?string $connectionName, ?string $queue, $jobId, int $attempts)
    {
        $this->container = $container;
        $this->rawBody = $rawBody;
        $this->connectionName = $connectionName;
        $this->queue = $queue;
        $this->jobId = $jobId;
        $this->attemptCount = $attempts;
        $this->deleted = true;
        $this->failed = true;
    }

    public function getJobId()
    {
        return $this->jobId;
    }

    public function getRawBody()
    {
        return $this->rawBody;
    }

    public function attempts()
    {
        return $this->attemptCount;
    }
}
