<?php

namespace Laraworker\Bridge\Jobs;

use Illuminate\Bus\Batchable;
use Illuminate\Container\Container;
use Illuminate\Contracts\Events\Dispatcher;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\CallQueuedHandler;
use Illuminate\Queue\Events\JobFailed;
use Illuminate\Queue\Failed\NullFailedJobProvider;
use InvalidArgumentException;
use Laraworker\Bridge\BatchCallbacks;
use Laraworker\Bridge\GoJobException;
use Laraworker\Bridge\GoQueueJob;
use Laraworker\Bridge\Metadata\Peek;
use Throwable;

/**
 * Runs in PHP what Laravel runs when a job fails (Job::fail and
 * CallQueuedHandler::failed) for a job a Go worker failed, minus the
 * writes Go already made in the same transaction as it pushed this job:
 * the delete, the failed_jobs row, the batch counters and cancel, the
 * unique lock release. In Laravel's order: the batch callbacks Go names,
 * the chain's catch callbacks, the command's failed(), then JobFailed.
 *
 * A Go worker pushes it (PROTOCOL.md gives its serialized form); all
 * properties are public and untyped so that Go can write them.
 */
class RunFailureHooks implements ShouldQueue
{
    /** @var string the failed job's payload, exactly as it was in the jobs table */
    public $payload = '';

    /** @var string|null the queue connection the job was on */
    public $connectionName;

    /** @var string|null the queue it was on */
    public $queueName;

    /** @var int|string|null its id in the queue (jobs.id) */
    public $jobId;

    /** @var int its attempts, the failed one included */
    public $attempts = 0;

    /** @var string the class of the exception Go failed it with */
    public $exceptionClass = '';

    /** @var string that exception's message */
    public $exceptionMessage = '';

    /** @var list<string> batch callbacks Go's counter update triggered (BatchCallbacks::AFTER_FAILURE) */
    public $batchCallbacks = [];

    /**
     * One attempt: a PHP worker that dies while running the hooks must not
     * run them again (a later pop fails this job with
     * MaxAttemptsExceededException instead, which leaves it in
     * failed_jobs for a person to look at, and queue:retry if they want).
     *
     * @var int
     */
    public $tries = 1;

    public function __construct(string $payload = '', ?string $connectionName = null, ?string $queueName = null, $jobId = null,
        int $attempts = 0, string $exceptionClass = '', string $exceptionMessage = '', array $batchCallbacks = [])
    {
        $this->payload = $payload;
        $this->connectionName = $connectionName;
        $this->queueName = $queueName;
        $this->jobId = $jobId;
        $this->attempts = $attempts;
        $this->exceptionClass = $exceptionClass;
        $this->exceptionMessage = $exceptionMessage;
        $this->batchCallbacks = $batchCallbacks;
    }

    public function handle(): void
    {
        $payload = json_decode($this->payload, true);
        if (! is_array($payload)) {
            throw new InvalidArgumentException('laraworker: RunFailureHooks got a payload that is not a JSON object');
        }
        $app = Container::getInstance();
        $job = new GoQueueJob($app, $this->payload, $this->connectionName, $this->queueName, $this->jobId, (int) $this->attempts);
        $e = GoJobException::from((string) $this->exceptionClass, (string) $this->exceptionMessage, $job);
        $problem = null;
        try {
            $this->hooks($app, $payload, $job, $e);
        } catch (Throwable $thrown) {
            $problem = $thrown;
        } finally {
            try {
                $this->jobFailed($app, $job, $e);
            } catch (Throwable $thrown) {
                $problem = $problem ?? $thrown;
            }
        }
        // Job::fail lets these propagate to the worker, which reports them
        // and goes on: the failure stays recorded either way.
        if ($problem !== null) {
            report($problem);
        }
    }

    /**
     * Job::failed: the class named by payload.job gets failed($data, $e,
     * $uuid); for object jobs that is CallQueuedHandler::failed, done here
     * without the writes Go made.
     */
    private function hooks(Container $app, array $payload, GoQueueJob $job, Throwable $e): void
    {
        $name = (string) ($payload['job'] ?? '');
        [$class] = explode('@', $name, 2);
        // 12.12+ passes the job to failed() (Job::failed's fourth argument).
        $withJob = (new \ReflectionMethod(CallQueuedHandler::class, 'failed'))->getNumberOfParameters() >= 4;
        if ($class !== CallQueuedHandler::class) {
            if ($class !== '' && method_exists($instance = $app->make($class), 'failed')) {
                $args = [$payload['data'] ?? null, $e, $payload['uuid'] ?? ''];
                $instance->failed(...($withJob ? array_merge($args, [$job]) : $args));
            }

            return;
        }
        $handler = $app->make(CallQueuedHandler::class);
        // A fresh command, decrypted again when encrypted, its models
        // loaded again: a model that is gone throws ModelNotFoundException
        // here, as in Laravel's failed(), and then no batch callback, chain
        // catch or failed() runs; JobFailed still fires.
        $command = Peek::call($handler, 'getCommand', (array) ($payload['data'] ?? []));
        if ($withJob) {
            // 12.12+: the command sees the job in failed().
            $command = Peek::call($handler, 'setJobInstanceIfNecessary', $job, $command);
        }
        if ($command instanceof \__PHP_Incomplete_Class) {
            return; // the class is gone
        }
        if ($this->batchCallbacks !== [] && in_array(Batchable::class, class_uses_recursive($command), true)
            && ($batch = $command->batch()) !== null) {
            BatchCallbacks::run($batch, $this->batchCallbacks, $e);
        }
        if (method_exists($command, 'invokeChainCatchCallbacks')) {
            $command->invokeChainCatchCallbacks($e);
        }
        if (method_exists($command, 'failed')) {
            $command->failed($e);
        }
    }

    /**
     * Job::fail's JobFailed, to every listener as after a PHP failure, but
     * queue:work's own listener must not write failed_jobs a second time:
     * while it runs, the app's failed job provider is a null one.
     */
    private function jobFailed(Container $app, GoQueueJob $job, Throwable $e): void
    {
        $failer = $app->bound('queue.failer') ? $app->make('queue.failer') : null;
        $app->instance('queue.failer', new NullFailedJobProvider);
        try {
            $app->make(Dispatcher::class)->dispatch(new JobFailed($job->getConnectionName(), $job, $e));
        } finally {
            if ($failer !== null) {
                $app->instance('queue.failer', $failer);
            } else {
                $app->forgetInstance('queue.failer');
            }
        }
    }
}
