<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * Private and protected properties: serialized names carry NUL-mangled prefixes
 * ("\0App\Jobs\PrivatePropsJob\0secret", "\0*\0level").
 */
class PrivatePropsJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    private string $secret = 'private value';

    protected int $level = 3;

    protected ?array $options = null;

    public string $visible = 'public value';

    public function __construct(?string $secret = null)
    {
        if ($secret !== null) {
            $this->secret = $secret;
        }
        $this->options = ['mode' => 'strict'];
    }

    public function handle()
    {
        $this->recordRun([
            'secret' => $this->secret,
            'level' => $this->level,
            'options' => $this->options,
            'visible' => $this->visible,
        ]);
    }
}
