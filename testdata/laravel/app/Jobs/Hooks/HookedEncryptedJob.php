<?php

namespace App\Jobs\Hooks;

use Illuminate\Contracts\Queue\ShouldBeEncrypted;

/**
 * HookedJob with an encrypted command: the failure hooks decrypt it.
 */
class HookedEncryptedJob extends HookedJob implements ShouldBeEncrypted
{
}
