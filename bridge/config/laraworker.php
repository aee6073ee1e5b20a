<?php

// laraworker: the queued jobs that Go runs.
//
// Jobs of the classes listed under 'jobs' (and, for a parent class, an
// interface or a trait, of every class that extends, implements or uses it)
// are dispatched onto the queue laraworker serves, unless the dispatch names
// a queue itself: the job's onQueue(), or the onQueue() of the chain or
// batch it belongs to. Run them with `laraworker work --queue=<queue>`.
//
// ShouldBeUnique jobs stay on PHP (Go cannot release their unique lock), and
// so do members of batches with then/catch/finally callbacks (PHP closures).

return [

    // The queue laraworker serves.
    'queue' => 'laraworker',

    // The queue connection (config/queue.php) laraworker serves. It must use
    // the database driver. null: the default connection (QUEUE_CONNECTION).
    'connection' => null,

    // The job classes Go handles, for example:
    //
    //     App\Jobs\ResizeImage::class,             // onto the queue above
    //     App\Jobs\Contracts\RunsInGo::class,       // every job implementing it
    //     App\Jobs\BuildReport::class => 'reports', // onto another queue
    //     App\Jobs\Export::class => ['queue' => 'exports', 'connection' => 'database'],
    'jobs' => [
    ],

    // Record every `php artisan queue:work` process of this app in
    // laraworker's tables, so the laraworker dashboard lists PHP workers
    // beside the Go ones (host, pid, queues, jobs done/failed/released,
    // memory, the job running now) and counts their jobs per minute and
    // class. It needs laraworker's tables (`laraworker tables`): without
    // them the worker records nothing and says nothing. A worker writes one
    // row every 5 seconds or so, never per job.
    'fleet' => env('LARAWORKER_FLEET', false),

];
