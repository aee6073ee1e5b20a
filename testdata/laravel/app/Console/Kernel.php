<?php

namespace App\Console;

use Illuminate\Console\Scheduling\Schedule;
use Illuminate\Foundation\Console\Kernel as ConsoleKernel;

class Kernel extends ConsoleKernel
{
    /**
     * Listed explicitly: there is no Composer class map to discover commands from.
     *
     * @var array
     */
    protected $commands = [
        Commands\DispatchCommand::class,
        Commands\HooksCommand::class,
        Commands\CacheOpsCommand::class,
    ];

    protected function schedule(Schedule $schedule)
    {
    }
}
