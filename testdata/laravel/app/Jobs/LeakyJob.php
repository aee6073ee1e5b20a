<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

/**
 * Carries the app's DB password and APP_KEY in its properties and throws
 * them in its exception, as a job that builds a DSN or signs with the key
 * might: the dashboard must show neither (issue 38).
 */
class LeakyJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public string $dsn;

    public function __construct(public ?string $password = null, public ?string $key = null)
    {
        $this->dsn = 'mysql://app:'.rawurlencode((string) $password).'@db.internal/app';
    }

    public function handle()
    {
        throw new RuntimeException("could not connect to {$this->dsn} with password {$this->password} and key {$this->key}");
    }
}
