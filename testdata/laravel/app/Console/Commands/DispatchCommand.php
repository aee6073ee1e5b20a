<?php

namespace App\Console\Commands;

use App\Support\Kinds;
use Illuminate\Console\Command;

/**
 * Lets end-to-end tests (and the fixture generator) push jobs from real PHP.
 */
class DispatchCommand extends Command
{
    protected $signature = 'app:dispatch
        {kind : a kind name, or "all"; "list" prints the names}
        {--count=1 : how many times to dispatch it}
        {--queue= : override the queue name}
        {--delay= : delay in seconds (object and closure jobs)}';

    protected $description = 'Dispatch one of the test job kinds onto the database queue';

    public function handle()
    {
        $kinds = Kinds::all();
        $kind = $this->argument('kind');
        if (isset(Kinds::movable()[$kind])) {
            $kinds = Kinds::movable();
        }
        $named = $kinds + Kinds::byNameOnly();

        if ($kind === 'list') {
            foreach (array_keys($named) as $name) {
                $this->line($name);
            }

            return 0;
        }
        if ($kind !== 'all' && ! isset($named[$kind])) {
            $this->error("Unknown kind [{$kind}]. Known: ".implode(', ', array_keys($named)).', all');

            return 1;
        }

        $selected = $kind === 'all' ? $kinds : [$kind => $named[$kind]];
        $queue = $this->option('queue') !== null && $this->option('queue') !== '' ? $this->option('queue') : null;
        $delay = $this->option('delay') !== null && $this->option('delay') !== '' ? (int) $this->option('delay') : null;
        $count = max(1, (int) $this->option('count'));

        foreach ($selected as $name => $dispatch) {
            for ($i = 0; $i < $count; $i++) {
                $this->line("dispatched {$name}: ".$dispatch($queue, $delay));
            }
        }

        return 0;
    }
}
