<?php

return [
    // The worker keeps the maxExceptions counter (job-exceptions:<uuid>) and the
    // queue:restart timestamp in the default store. `database` lets a non-PHP
    // worker share them through the `cache` table.
    'default' => env('CACHE_DRIVER', 'database'),

    'stores' => [
        'array' => [
            'driver' => 'array',
            'serialize' => false,
        ],

        'database' => [
            'driver' => 'database',
            'table' => 'cache',
            'connection' => null,
            'lock_connection' => null,
        ],

        // As the 8.x skeleton's redis store (its unique-job locks: the e2e Redis test).
        // The skeleton's connections, which the e2e Sentinel and TLS tests
        // move with REDIS_CACHE_CONNECTION and REDIS_CACHE_LOCK_CONNECTION.
        'redis' => [
            'driver' => 'redis',
            'connection' => env('REDIS_CACHE_CONNECTION', 'cache'),
            'lock_connection' => env('REDIS_CACHE_LOCK_CONNECTION', 'default'),
        ],

        'file' => [
            'driver' => 'file',
            'path' => storage_path('framework/cache/data'),
        ],
    ],

    'prefix' => env('CACHE_PREFIX', 'laravel_cache'),
];
