<?php

// laraworker's reader of a Laravel app's queue configuration (Laravel 8-13).
//
// laraworker runs it with the app's own PHP, the script on standard input:
//
//     php -d display_errors=stderr -- APP_DIR ENV_FILE CONNECTION < read-config.php
//
// It boots the app's console kernel as `php artisan` does (the app's service
// providers run), then only reads configuration values: it opens no database
// connection and runs no job. What it prints:
//
// - stdout: one JSON object with the values laraworker needs, no secrets;
// - file descriptor 3, only when laraworker opened it: one JSON object with
//   the secrets (DB password, app key, previous keys). Run by hand, the
//   secrets are not printed anywhere.
//
// CONNECTION names the queue connection laraworker serves; empty means
// config('laraworker.connection') (the bridge), else config('queue.default').
// ENV_FILE, when not empty, is the .env laraworker was pointed at.

[$appDir, $envFile, $connection] = array_slice($argv, 1, 3) + ['', '', ''];

// Read from standard input, PHP defines no STDERR constant.
$stderr = fopen('php://stderr', 'w');

if ($appDir === '' || ! is_file($appDir.'/bootstrap/app.php')) {
    fwrite($stderr, "laraworker: no bootstrap/app.php in {$appDir}\n");
    exit(2);
}

// Boot as `php artisan` does: artisan's own statements before it requires
// bootstrap/app.php (its autoloader, whichever it is), then that require
// (laraworker_artisan_boot, prepended to this script by laraworker).
try {
    $laraworkerBoot = laraworker_artisan_boot($appDir);
} catch (RuntimeException $e) {
    fwrite($stderr, 'laraworker: '.$e->getMessage()."\n");
    exit(2);
}

// Whatever the app prints while booting must not mix with the answer.
ob_start();
try {
    $app = eval($laraworkerBoot);
    if ($envFile !== '') {
        $app->useEnvironmentPath(dirname($envFile));
        $app->loadEnvironmentFrom(basename($envFile));
    }
    $app->make(Illuminate\Contracts\Console\Kernel::class)->bootstrap();
} catch (Throwable $e) {
    fwrite($stderr, (string) ob_get_clean());
    fwrite($stderr, 'laraworker: '.get_class($e).': '.$e->getMessage().' in '.$e->getFile().':'.$e->getLine()."\n");
    exit(1);
}
fwrite($stderr, (string) ob_get_clean());

$config = $app['config'];

/** A string, or null for anything that is not a scalar. */
function laraworker_str($value)
{
    if (is_array($value)) {
        $value = reset($value); // read/write hosts: the first one
    }

    return is_scalar($value) ? (string) $value : null;
}

$bridge = $config->get('laraworker');
$from = '--connection';
if ($connection === '') {
    $connection = is_array($bridge) ? (string) ($bridge['connection'] ?? '') : '';
    $from = 'config/laraworker.php';
}
if ($connection === '') {
    $connection = (string) $config->get('queue.default');
    $from = 'queue.default';
}

$queueConnections = [];
foreach ((array) $config->get('queue.connections') as $name => $settings) {
    $queueConnections[$name] = laraworker_str($settings['driver'] ?? null);
}

$qc = (array) $config->get("queue.connections.{$connection}", []);
// A redis queue connection's "connection" names a Redis connection: its
// failed jobs and batches live in queue.failed's database.
$isRedis = laraworker_str($qc['driver'] ?? null) === 'redis';
$dbName = $isRedis
    ? laraworker_str($config->get('queue.failed.database')) ?? laraworker_str($config->get('database.default'))
    : laraworker_str($qc['connection'] ?? null) ?? laraworker_str($config->get('database.default'));

// Laravel merges a connection's `url` into its settings when it connects.
$db = (array) $config->get("database.connections.{$dbName}", []);
$db = (new Illuminate\Support\ConfigurationUrlParser)->parseConfiguration($db);

// The store's own prefix wins over cache.prefix (CacheManager::getPrefix).
$store = laraworker_str($config->get('cache.default'));
$cache = (array) $config->get("cache.stores.{$store}", []);

// The redis connection the cache store takes its locks on (RedisStore's
// lockConnection, else its connection), with its url merged in.
$lockConnection = laraworker_str($cache['lock_connection'] ?? null) ?? laraworker_str($cache['connection'] ?? null) ?? 'default';
$redis = (array) $config->get("database.redis.{$lockConnection}", []);
$redis = (new Illuminate\Support\ConfigurationUrlParser)->parseConfiguration($redis);
$redisOptions = (array) $config->get('database.redis.options', []);

$answer = [
    'version' => $app->version(),
    'queue_default' => laraworker_str($config->get('queue.default')),
    'connection' => $connection,
    'connection_from' => $from,
    'queue_connections' => $queueConnections,
    'queue' => [
        'driver' => laraworker_str($qc['driver'] ?? null),
        'table' => laraworker_str($qc['table'] ?? null),
        'queue' => laraworker_str($qc['queue'] ?? null),
        // DatabaseConnector's own default when the key is missing.
        'retry_after' => (int) ($qc['retry_after'] ?? 60),
        'after_commit' => (bool) ($qc['after_commit'] ?? false),
        'connection' => laraworker_str($qc['connection'] ?? null),
    ],
    'db_connection' => $dbName,
    'db' => [
        'driver' => laraworker_str($db['driver'] ?? null),
        'host' => laraworker_str($db['host'] ?? null),
        'port' => laraworker_str($db['port'] ?? null),
        'database' => laraworker_str($db['database'] ?? null),
        'username' => laraworker_str($db['username'] ?? null),
        'unix_socket' => laraworker_str($db['unix_socket'] ?? null),
        'prefix' => laraworker_str($db['prefix'] ?? null),
        'version' => laraworker_str($db['version'] ?? null),
    ],
    'failed' => [
        'driver' => laraworker_str($config->get('queue.failed.driver')),
        'database' => laraworker_str($config->get('queue.failed.database')),
        'table' => laraworker_str($config->get('queue.failed.table')),
    ],
    'batching' => [
        'database' => laraworker_str($config->get('queue.batching.database')),
        'table' => laraworker_str($config->get('queue.batching.table')),
    ],
    'cache' => [
        'store' => $store,
        'driver' => laraworker_str($cache['driver'] ?? null),
        'table' => laraworker_str($cache['table'] ?? null),
        'lock_table' => laraworker_str($cache['lock_table'] ?? null),
        'connection' => laraworker_str($cache['connection'] ?? null),
        'prefix' => laraworker_str($cache['prefix'] ?? $config->get('cache.prefix')),
    ],
    'redis' => [
        'client' => laraworker_str($config->get('database.redis.client')),
        'lock_connection' => $lockConnection,
        'defined' => $redis !== [],
        'scheme' => laraworker_str($redis['scheme'] ?? null),
        'host' => laraworker_str($redis['host'] ?? null),
        'port' => laraworker_str($redis['port'] ?? null),
        'database' => laraworker_str($redis['database'] ?? null),
        'username' => laraworker_str($redis['username'] ?? null),
        'prefix' => laraworker_str($redis['prefix'] ?? ($redisOptions['prefix'] ?? null)),
    ],
    'app' => [
        'name' => laraworker_str($config->get('app.name')),
        'timezone' => laraworker_str($config->get('app.timezone')),
        'cipher' => laraworker_str($config->get('app.cipher')),
    ],
    'bridge' => null,
    // The default cache store, when it is a redis one, whatever the queue
    // connection's driver: Go shares it with PHP (queue:restart,
    // maxExceptions, unique locks, job middleware). Another store's array
    // may hold credentials (memcached, dynamodb): it is not printed.
    'redis_cache_store' => laraworker_str($cache['driver'] ?? null) === 'redis' ? $cache : null,
    // What a redis queue connection is served from, as config() returns it
    // (database.redis, which holds passwords, goes with the secrets).
    'redis_queue' => $isRedis ? [
        'queue' => $qc,
        'cache_store' => $cache,
        'horizon' => class_exists('Laravel\Horizon\Horizon'),
        // config('horizon') as far as Horizon's records need it (Go writes
        // them for the jobs it runs, as Horizon's listeners do).
        'horizon_config' => class_exists('Laravel\Horizon\Horizon') ? [
            'prefix' => $config->get('horizon.prefix'),
            'use' => $config->get('horizon.use', 'default'),
            'trim' => $config->get('horizon.trim'),
            'silenced' => $config->get('horizon.silenced'),
        ] : null,
    ] : null,
];

/**
 * The bridge's hooks queue (config/laraworker.php hooks_queue), resolved as
 * the bridge's HooksQueue::resolve does, with what Go needs to write its
 * jobs: the queue connection's driver, database connection and table.
 */
function laraworker_hooks_queue($config, array $bridge): array
{
    $setting = $bridge['hooks_queue'] ?? [];
    if (is_string($setting)) {
        $setting = ['queue' => $setting];
    }
    $setting = is_array($setting) ? $setting : [];
    $name = function ($value) {
        return is_string($value) && $value !== '' ? $value : null;
    };
    $connection = $name($setting['connection'] ?? null) ?? $name($bridge['connection'] ?? null) ?? $name($config->get('queue.default'));
    $qc = $connection === null ? [] : (array) $config->get("queue.connections.{$connection}", []);
    $dbName = laraworker_str($qc['connection'] ?? null) ?? laraworker_str($config->get('database.default'));
    $db = (array) $config->get("database.connections.{$dbName}", []);

    return [
        'connection' => $connection,
        'queue' => $name($setting['queue'] ?? null) ?? $name($qc['queue'] ?? null),
        'defined' => $qc !== [],
        'driver' => laraworker_str($qc['driver'] ?? null),
        'db_connection' => $dbName,
        'table' => laraworker_str($db['prefix'] ?? null).(laraworker_str($qc['table'] ?? null) ?? 'jobs'),
    ];
}

if (is_array($bridge)) {
    $jobs = [];
    foreach ((array) ($bridge['jobs'] ?? []) as $class => $target) {
        if (is_int($class)) {
            [$class, $target] = [$target, null];
        }
        $jobs[] = [
            'class' => laraworker_str($class),
            'queue' => laraworker_str(is_array($target) ? ($target['queue'] ?? null) : $target),
            'connection' => laraworker_str(is_array($target) ? ($target['connection'] ?? null) : null),
        ];
    }
    $provider = 'Laraworker\\Bridge\\LaraworkerServiceProvider';
    $answer['bridge'] = [
        'queue' => laraworker_str($bridge['queue'] ?? null),
        'connection' => laraworker_str($bridge['connection'] ?? null),
        'jobs' => $jobs,
        // The provider registered in the app (config('laraworker') alone
        // can be a published file without the package).
        'installed' => class_exists($provider) && method_exists($app, 'getProviders') && $app->getProviders($provider) !== [],
        'capabilities' => class_exists($provider) && defined($provider.'::CAPABILITIES')
            ? array_values(array_filter((array) constant($provider.'::CAPABILITIES'), 'is_string')) : [],
        'hooks_queue' => laraworker_hooks_queue($config, $bridge),
        'route_batches_with_callbacks' => (bool) ($bridge['route_batches_with_callbacks'] ?? false),
    ];
}

echo json_encode($answer, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";

// Secrets go only to file descriptor 3, which laraworker reads through a pipe.
$secrets = @fopen('php://fd/3', 'w');
if ($secrets !== false) {
    // database.redis for any queue connection: the redis cache store and
    // the ...WithRedis job middleware live there. One that does not encode
    // (not UTF-8) must not cost the other secrets.
    $redisConfig = $config->get('database.redis');
    if (! is_array($redisConfig) || json_encode($redisConfig, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE) === false) {
        $redisConfig = null;
    }
    $previous = $config->get('app.previous_keys', []);
    fwrite($secrets, json_encode([
        'db_password' => laraworker_str($db['password'] ?? null),
        'app_key' => laraworker_str($config->get('app.key')),
        'app_previous_keys' => array_values(array_filter(array_map('laraworker_str', is_array($previous) ? $previous : []))),
        'redis_password' => laraworker_str($redis['password'] ?? null),
        // An object even when empty or a list: Go reads a JSON object.
        'redis_config' => $redisConfig === null ? null : (object) $redisConfig,
    ], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE));
    fclose($secrets);
}
