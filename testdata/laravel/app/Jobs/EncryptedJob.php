<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use Illuminate\Contracts\Queue\ShouldBeEncrypted;

/**
 * data.command is encrypted with app.key / app.cipher.
 */
class EncryptedJob implements ShouldQueue, ShouldBeEncrypted
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(public string $secret = 'top secret ✓', public int $podcastId = 42)
    {
    }

    public function handle()
    {
        $this->recordRun(['secret' => $this->secret, 'podcastId' => $this->podcastId]);
    }
}
