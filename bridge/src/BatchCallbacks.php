<?php

namespace Laraworker\Bridge;

use Illuminate\Bus\Batch;
use Illuminate\Container\Container;
use InvalidArgumentException;
use Laraworker\Bridge\Metadata\Peek;
use Throwable;

/**
 * Runs a batch's callbacks (and events) that a Go worker's write to the
 * job_batches row triggered, as Batch::recordSuccessfulJob and
 * Batch::recordFailedJob run them right after their own counter update:
 * which ones Go decides from the counts it wrote (PROTOCOL.md); how, this
 * does, through the Batch's own invokeCallbacks (12.32+) or
 * invokeHandlerCallback: each group on a fresh() copy of the batch, each
 * callback in a try/catch that report()s, in Laravel's order whatever
 * order they were asked in.
 */
final class BatchCallbacks
{
    /** After a success (recordSuccessfulJob), in Laravel's order. */
    public const AFTER_SUCCESS = ['started', 'progress', 'finished', 'then', 'finally'];

    /** After a failure (recordFailedJob), in Laravel's order. */
    public const AFTER_FAILURE = ['started', 'canceled', 'progress', 'failure', 'catch', 'finally'];

    /**
     * @param  list<string>  $which
     * @param  Throwable|null  $e  the failure's exception; null after a success
     *
     * @throws InvalidArgumentException for a name that is not a callback or event of that outcome
     */
    public static function run(Batch $batch, array $which, ?Throwable $e): void
    {
        $order = $e === null ? self::AFTER_SUCCESS : self::AFTER_FAILURE;
        $unknown = array_diff($which, $order);
        if ($unknown !== []) {
            throw new InvalidArgumentException('laraworker: no batch callback ['.implode(', ', $unknown).'] after a '.($e === null ? 'success' : 'failure')
                .'; want '.implode(', ', $order));
        }
        foreach ($order as $what) {
            if (! in_array($what, $which, true)) {
                continue;
            }
            switch ($what) {
                case 'started':
                    self::event($batch, 'Illuminate\\Bus\\Events\\BatchStarted', $batch);
                    break;
                case 'finished':
                    self::event($batch, 'Illuminate\\Bus\\Events\\BatchFinished', $batch);
                    break;
                case 'canceled':
                    self::event($batch, 'Illuminate\\Bus\\Events\\BatchCanceled', $batch, $e);
                    break;
                default:
                    self::callbacks($batch, $what, $e);
            }
        }
    }

    /**
     * One group of callbacks. The exception goes to catch, failure and
     * (after a failure) progress; to finally only before 12.32, whose
     * recordFailedJob passed it there too; never to then.
     */
    private static function callbacks(Batch $batch, string $type, ?Throwable $e): void
    {
        if (empty($batch->options[$type])) {
            return;
        }
        if ($type === 'then') {
            $e = null;
        }
        if (method_exists($batch, 'invokeCallbacks')) {
            // 12.32+: invokeCallbacks('finally') passes no exception.
            Peek::call($batch, 'invokeCallbacks', $type, $type === 'finally' ? null : $e);

            return;
        }
        $fresh = $batch->fresh();
        if ($fresh === null) {
            return; // deleted meanwhile: Laravel would fail on the null batch; nothing to call
        }
        foreach ($batch->options[$type] as $handler) {
            Peek::call($batch, 'invokeHandlerCallback', $handler, $fresh, $e);
        }
    }

    /**
     * A batch event of the versions that have it (BatchStarted 13.3+,
     * BatchFinished 12.48+, BatchCanceled 12.51+; 13.x passes the
     * exception to BatchCanceled).
     */
    private static function event(Batch $batch, string $class, ...$args): void
    {
        if (! class_exists($class)) {
            return;
        }
        $constructor = (new \ReflectionClass($class))->getConstructor();
        $args = array_slice($args, 0, $constructor ? $constructor->getNumberOfParameters() : 0);
        $container = Container::getInstance();
        if ($container->bound(\Illuminate\Contracts\Events\Dispatcher::class)) {
            $container->make(\Illuminate\Contracts\Events\Dispatcher::class)->dispatch(new $class(...$args));
        }
    }
}
