<?php

namespace App\Providers;

use App\Support\QueueForwardTable;
use Illuminate\Support\ServiceProvider;

/**
 * Registers the forwards TEST_QUEUE_FORWARDS lists ("from=to" or
 * "from=to@connection", comma-separated) as an app's boot would call
 * Queue::forward on Laravel 13.26+ (see QueueForwardTable).
 */
class QueueForwardsServiceProvider extends ServiceProvider
{
    public function register()
    {
        $spec = (string) env('TEST_QUEUE_FORWARDS', '');
        if ($spec === '') {
            return;
        }
        $this->app->singleton('queue.routes', function () use ($spec) {
            $table = new QueueForwardTable;
            foreach (explode(',', $spec) as $one) {
                [$from, $to] = explode('=', $one, 2) + [1 => ''];
                [$to, $connection] = explode('@', $to, 2) + [1 => null];
                $table->forward($from, $to, $connection);
            }

            return $table;
        });
    }
}
