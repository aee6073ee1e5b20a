<?php

// laraworker: the queued jobs that Go runs.
//
// Jobs of the classes listed under 'jobs' (and, for a parent class, an
// interface or a trait, of every class that extends, implements or uses it)
// are dispatched onto the queue laraworker serves, unless the dispatch names
// a queue itself: the job's onQueue(), or the onQueue() of the chain or
// batch it belongs to. Run them with `laraworker work --queue=<queue>`.
//
// Every queued job (or, with 'record' => 'routed', every job of a routed
// class) carries a "laraworker" payload key with what Go needs to run it as
// PHP would (its middleware, unique lock, models, whether it has failed();
// bridge/PROTOCOL.md). What only PHP can run
// (failed(), JobFailed listeners, chain catch and batch callbacks) Go hands
// back to PHP as small jobs on 'hooks_queue', which a PHP worker must serve.

return [

    // The queue laraworker serves.
    'queue' => 'laraworker',

    // The queue connection (config/queue.php) laraworker serves: a database
    // or redis one. null: the default connection (QUEUE_CONNECTION).
    'connection' => null,

    // The job classes Go handles, for example:
    //
    //     App\Jobs\ResizeImage::class,             // onto the queue above
    //     App\Jobs\Contracts\RunsInGo::class,       // every job implementing it
    //     App\Jobs\BuildReport::class => 'reports', // onto another queue
    //     App\Jobs\Export::class => ['queue' => 'exports', 'connection' => 'database'],
    'jobs' => [
    ],

    // Which jobs carry the "laraworker" payload key (their unique lock,
    // models and job middleware, recorded at dispatch: what Go needs to run
    // them as PHP would). 'all': every job the app queues, so a class that
    // `laraworker work --route 'App\Jobs\X=exec:...'` sends to Go has it
    // as a class listed above does; 'routed': only the classes listed above
    // (laraworker work then refuses a --route class whose lock, models or
    // middleware it cannot learn).
    'record' => env('LARAWORKER_RECORD', 'all'),

    // Where laraworker pushes the jobs that run, in PHP, the hooks of the
    // jobs it ran (Laraworker\Bridge\Jobs\RunFailureHooks: the class's
    // failed(), chain catch callbacks, the JobFailed event;
    // Laraworker\Bridge\Jobs\RunBatchCallbacks: a batch's then, catch,
    // finally...). A `php artisan queue:work` must serve this queue. It is a
    // connection of the database driver on the database laraworker's queue
    // is in (laraworker pushes these jobs in the same transaction as its own
    // write), and not a queue laraworker serves. When laraworker serves a
    // redis connection, name a database one here: its failed_jobs and
    // job_batches are in the database, where the hook jobs are pushed.
    //   connection: null: the 'connection' above (else QUEUE_CONNECTION)
    //   queue:      null: that connection's default queue (config/queue.php)
    'hooks_queue' => [
        'connection' => env('LARAWORKER_HOOKS_CONNECTION'),
        'queue' => env('LARAWORKER_HOOKS_QUEUE'),
    ],

    // Members of a Bus::batch() with then/catch/finally/progress callbacks
    // go to Go like any other job: laraworker pushes RunBatchCallbacks (or
    // RunFailureHooks) onto hooks_queue when a member's outcome triggers
    // them, and PHP runs them. Set it to false to keep such members on PHP,
    // for instance with a laraworker older than the hook jobs (it gives
    // such jobs back to PHP workers, which takes a round trip per job).
    'route_batches_with_callbacks' => env('LARAWORKER_ROUTE_BATCHES_WITH_CALLBACKS', true),

    // Record every `php artisan queue:work` process of this app in
    // laraworker's tables, so the laraworker dashboard lists PHP workers
    // beside the Go ones (host, pid, queues, jobs done/failed/released,
    // memory, the job running now) and counts their jobs per minute and
    // class. It needs laraworker's tables (`laraworker tables`): without
    // them the worker records nothing and says nothing. A worker writes one
    // row every 5 seconds or so, never per job.
    'fleet' => env('LARAWORKER_FLEET', false),

];
