<?php

namespace Laraworker\Bridge;

use Illuminate\Database\Eloquent\ModelNotFoundException;
use Illuminate\Queue\ManuallyFailedException;
use Illuminate\Queue\MaxAttemptsExceededException;
use RuntimeException;
use Throwable;

/**
 * The exception a job failed with in a Go worker, as the failure hooks PHP
 * runs for it receive it: Go's message, and in $goClass the class Go
 * reported (a Go error type, or the PHP class an exec: handler named).
 */
class GoJobException extends RuntimeException
{
    /**
     * Laravel's own exceptions a Go worker fails jobs with: hooks get an
     * instance of the class itself, so `$e instanceof
     * MaxAttemptsExceededException` in failed() holds as after a PHP
     * failure. Any other class arrives as a GoJobException.
     */
    private const LARAVEL = [
        MaxAttemptsExceededException::class,
        'Illuminate\\Queue\\TimeoutExceededException',
        ManuallyFailedException::class,
        ModelNotFoundException::class,
    ];

    /** @var string */
    public $goClass;

    public function __construct(string $goClass, string $message)
    {
        parent::__construct($message);
        $this->goClass = $goClass;
    }

    /**
     * The exception for Go's class and message; $job, when given, is set
     * on a MaxAttemptsExceededException as its forJob() does (10.x+).
     */
    public static function from(string $class, string $message, $job = null): Throwable
    {
        $class = ltrim($class, '\\');
        if (in_array($class, self::LARAVEL, true) && class_exists($class)) {
            $e = new $class($message);
            if ($job !== null && $e instanceof MaxAttemptsExceededException && property_exists($e, 'job')) {
                $e->job = $job;
            }

            return $e;
        }

        return new self($class, $message);
    }
}
