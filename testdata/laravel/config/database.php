<?php

return [
    'default' => env('DB_CONNECTION', 'sqlite'),

    'connections' => [
        'sqlite' => [
            'driver' => 'sqlite',
            // An absolute path, or a path relative to the app directory.
            'database' => (function () {
                $path = env('DB_DATABASE', 'database/database.sqlite');
                return str_starts_with($path, '/') || $path === ':memory:' ? $path : base_path($path);
            })(),
            'prefix' => env('DB_PREFIX', ''),
            'prefix_indexes' => true,
            'foreign_key_constraints' => env('DB_FOREIGN_KEYS', true),
        ],

        'mysql' => [
            'driver' => 'mysql',
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '3306'),
            'database' => env('DB_DATABASE', 'laraworker_e2e'),
            'username' => env('DB_USERNAME', 'root'),
            'password' => env('DB_PASSWORD', ''),
            'unix_socket' => env('DB_SOCKET', ''),
            'charset' => 'utf8mb4',
            'collation' => 'utf8mb4_unicode_ci',
            'prefix' => env('DB_PREFIX', ''),
            'prefix_indexes' => true,
            'strict' => true,
            'engine' => null,
        ],

        'pgsql' => [
            'driver' => 'pgsql',
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '5432'),
            'database' => env('DB_DATABASE', 'laraworker_e2e'),
            'username' => env('DB_USERNAME', 'postgres'),
            'password' => env('DB_PASSWORD', ''),
            'charset' => 'utf8',
            'prefix' => env('DB_PREFIX', ''),
            'prefix_indexes' => true,
            'schema' => 'public',
            'sslmode' => 'prefer',
        ],
    ],

    'migrations' => 'migrations',

    // As the 8.x skeleton: unique-job locks of the redis cache store are taken on the
    // "default" connection (lock_connection), under options.prefix + the cache prefix.
    'redis' => [
        'client' => env('REDIS_CLIENT', 'phpredis'),

        'options' => [
            'cluster' => env('REDIS_CLUSTER', 'redis'),
            'prefix' => env('REDIS_PREFIX', \Illuminate\Support\Str::slug(env('APP_NAME', 'laravel'), '_').'_database_'),
        ],

        // A native Redis Cluster, as the docs configure one for phpredis
        // (database.redis.clusters, options.cluster 'redis'), for the e2e
        // cluster tests: the queue's connection names it with
        // REDIS_QUEUE_CONNECTION=cluster, the seeds come from
        // REDIS_CLUSTER_HOST and REDIS_CLUSTER_PORT_1..3. Named apart from
        // "default", which RedisManager resolves before any cluster.
        'clusters' => [
            'cluster' => [
                ['host' => env('REDIS_CLUSTER_HOST', '127.0.0.1'), 'port' => env('REDIS_CLUSTER_PORT_1', '7000')],
                ['host' => env('REDIS_CLUSTER_HOST', '127.0.0.1'), 'port' => env('REDIS_CLUSTER_PORT_2', '7001')],
                ['host' => env('REDIS_CLUSTER_HOST', '127.0.0.1'), 'port' => env('REDIS_CLUSTER_PORT_3', '7002')],
            ],
        ],

        // Redis Sentinel as predis takes it (REDIS_CLIENT=predis), for the e2e
        // Sentinel tests: the queue's connection names it with
        // REDIS_QUEUE_CONNECTION=sentinel. The connection is the list of
        // sentinels; options.service is the name they monitor the master
        // under, options.parameters the master's password and database.
        'sentinel' => [
            'tcp://'.env('REDIS_SENTINEL_HOST', '127.0.0.1').':'.env('REDIS_SENTINEL_PORT', '26379').'?timeout=0.5',
            'options' => [
                'replication' => 'sentinel',
                'service' => env('REDIS_SENTINEL_SERVICE', 'mymaster'),
                'parameters' => [
                    'password' => env('REDIS_PASSWORD', null),
                    'database' => env('REDIS_DB', '0'),
                ],
            ],
        ],

        // TLS with a client certificate, as phpredis takes it (the SSL context
        // under context.stream), for the e2e TLS tests:
        // REDIS_QUEUE_CONNECTION=tls with REDIS_TLS_CA, REDIS_TLS_CERT and
        // REDIS_TLS_KEY set (PHP reads an option set to null as "").
        'tls' => [
            'scheme' => 'tls',
            'host' => env('REDIS_HOST', '127.0.0.1'),
            'port' => env('REDIS_PORT', '6379'),
            'password' => env('REDIS_PASSWORD', null),
            'database' => env('REDIS_DB', '0'),
            'context' => [
                'stream' => [
                    'cafile' => env('REDIS_TLS_CA'),
                    'local_cert' => env('REDIS_TLS_CERT'),
                    'local_pk' => env('REDIS_TLS_KEY'),
                ],
            ],
        ],

        'default' => [
            'url' => env('REDIS_URL'),
            'host' => env('REDIS_HOST', '127.0.0.1'),
            'password' => env('REDIS_PASSWORD', null),
            'port' => env('REDIS_PORT', '6379'),
            'database' => env('REDIS_DB', '0'),
        ],

        'cache' => [
            'url' => env('REDIS_URL'),
            'host' => env('REDIS_HOST', '127.0.0.1'),
            'password' => env('REDIS_PASSWORD', null),
            'port' => env('REDIS_PORT', '6379'),
            'database' => env('REDIS_CACHE_DB', '1'),
        ],
    ],
];
