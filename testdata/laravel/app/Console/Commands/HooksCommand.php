<?php

namespace App\Console\Commands;

use App\Support\HookKinds;
use Illuminate\Console\Command;

/**
 * Dispatches the jobs of the bridge's hook tests (e2e/bridgehooks_test.go):
 * classes with job middleware, unique locks, models and failed().
 */
class HooksCommand extends Command
{
    protected $signature = 'app:hooks {kind : a kind name; "list" prints the names}';

    protected $description = 'Dispatch one of the bridge hook test jobs';

    public function handle()
    {
        $kinds = HookKinds::all();
        $kind = $this->argument('kind');
        if ($kind === 'list') {
            foreach (array_keys($kinds) as $name) {
                $this->line($name);
            }

            return 0;
        }
        if (! isset($kinds[$kind])) {
            $this->error("Unknown kind [{$kind}]. Known: ".implode(', ', array_keys($kinds)));

            return 1;
        }
        $this->line("dispatched {$kind}: ".$kinds[$kind]());

        return 0;
    }
}
