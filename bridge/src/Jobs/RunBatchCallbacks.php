<?php

namespace Laraworker\Bridge\Jobs;

use Illuminate\Bus\BatchRepository;
use Illuminate\Container\Container;
use Illuminate\Contracts\Queue\ShouldQueue;
use InvalidArgumentException;
use Laraworker\Bridge\BatchCallbacks;
use Laraworker\Bridge\GoJobException;

/**
 * Runs in PHP the batch callbacks (then, catch, finally, progress,
 * failure) and batch events that a Go worker's update of a job_batches
 * row triggered, as Laravel's Batch runs them after its own update. Go
 * decides which from the counts it wrote (PROTOCOL.md) and pushes this
 * job in the same transaction. For a failure of a job that has failure
 * hooks of its own, Go names the batch callbacks in RunFailureHooks
 * instead, which runs them first, as Laravel does.
 */
class RunBatchCallbacks implements ShouldQueue
{
    /** @var string job_batches.id */
    public $batchId = '';

    /** @var list<string> BatchCallbacks::AFTER_SUCCESS, or AFTER_FAILURE when an exception is given */
    public $callbacks = [];

    /** @var string|null the failure's exception class; null after a success */
    public $exceptionClass;

    /** @var string|null that exception's message */
    public $exceptionMessage;

    /** @var int one attempt, as RunFailureHooks */
    public $tries = 1;

    public function __construct(string $batchId = '', array $callbacks = [], ?string $exceptionClass = null, ?string $exceptionMessage = null)
    {
        $this->batchId = $batchId;
        $this->callbacks = $callbacks;
        $this->exceptionClass = $exceptionClass;
        $this->exceptionMessage = $exceptionMessage;
    }

    public function handle(): void
    {
        if ($this->batchId === '' || ! is_array($this->callbacks)) {
            throw new InvalidArgumentException('laraworker: RunBatchCallbacks needs a batch id and a list of callbacks');
        }
        $batch = Container::getInstance()->make(BatchRepository::class)->find($this->batchId);
        if ($batch === null) {
            return; // pruned or deleted: Laravel's batch() is null too
        }
        $e = $this->exceptionClass !== null
            ? GoJobException::from($this->exceptionClass, (string) $this->exceptionMessage)
            : null;
        BatchCallbacks::run($batch, array_values($this->callbacks), $e);
    }
}
