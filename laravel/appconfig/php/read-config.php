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
//   the secrets (DB password, app key, previous keys, every connection's
//   credentials). Run by hand, the secrets are not printed anywhere.
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
// A redis queue connection's "connection" names a Redis connection, and a
// beanstalkd or an sqs one has none: their failed jobs and batches live in
// queue.failed's database.
$isRedis = laraworker_str($qc['driver'] ?? null) === 'redis';
$isBeanstalkd = laraworker_str($qc['driver'] ?? null) === 'beanstalkd';
$isSqs = laraworker_str($qc['driver'] ?? null) === 'sqs';
$dbName = $isRedis || $isBeanstalkd || $isSqs
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

/**
 * Queue::forward (Laravel 13.26+) as the app registered it while booting:
 * the container's queue.routes keeps [from => [connection, to]] in memory
 * only (QueueRoutes::$forwards), so it is read here. A list of
 * {from, connection, to}; empty before 13.26.
 */
function laraworker_queue_forwards($app): array
{
    if (! $app->bound('queue.routes')) {
        return [];
    }
    try {
        $routes = $app->make('queue.routes');
        $forwards = (function () {
            return property_exists($this, 'forwards') ? $this->forwards : [];
        })->call($routes);
    } catch (Throwable $e) {
        return [];
    }
    $out = [];
    foreach ((array) $forwards as $from => $to) {
        [$connection, $queue] = is_array($to) ? array_values($to) + [null, null] : [null, $to];
        $out[] = ['from' => (string) $from, 'connection' => laraworker_str($connection), 'to' => laraworker_str($queue)];
    }

    return $out;
}

$answer = [
    'version' => $app->version(),
    'queue_forwards' => laraworker_queue_forwards($app),
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
        // A list of servers (predis's Redis Sentinel): no host and port say it.
        'servers' => isset($redis[0]),
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
        'horizon_config' => class_exists('Laravel\Horizon\Horizon') ? laraworker_horizon($config) : null,
    ] : null,
    // A beanstalkd queue connection as config() returns it (host, port,
    // queue, retry_after, block_for, timeout, after_commit: no secrets).
    'beanstalkd_queue' => $isBeanstalkd ? $qc : null,
    // An sqs queue connection (its array, which holds the AWS secret and
    // token, goes with the secrets): whether laravel/vapor-core serves it
    // (its service provider re-registers the sqs driver with VaporConnector).
    'sqs_queue' => $isSqs ? [
        'vapor' => method_exists($app, 'getProviders') && $app->getProviders('Laravel\Vapor\VaporServiceProvider') !== [],
    ] : null,
];

/**
 * config('horizon') as far as Go needs it: what its job records are
 * written with (prefix, use, trim, silenced), which Redis connection
 * Horizon::use() made for them while the app booted (its Redis Cluster
 * support makes database.redis.clusters.horizon; RedisManager resolves a
 * database.redis.horizon first), and what `work --horizon-supervisor`
 * takes a supervisor's settings from: the environments (with their keys'
 * order, which decides the match), the defaults, the environment
 * (horizon.env, else app.env) and MasterSupervisor::basename(), the
 * start of the master names horizon:pause signals (a custom name
 * resolver included).
 */
function laraworker_horizon($config): array
{
    $redis = (array) $config->get('database.redis', []);
    $made = isset($redis['horizon']) ? 'standalone' : (isset($redis['clusters']['horizon']) ? 'cluster' : null);
    $basename = null;
    try {
        if (class_exists('Laravel\Horizon\MasterSupervisor')) {
            $basename = laraworker_str(Laravel\Horizon\MasterSupervisor::basename());
        }
    } catch (Throwable $e) {
        $basename = null;
    }
    $environments = $config->get('horizon.environments');

    return [
        'prefix' => $config->get('horizon.prefix'),
        'use' => $config->get('horizon.use', 'default'),
        'trim' => $config->get('horizon.trim'),
        'silenced' => $config->get('horizon.silenced'),
        'connection_made' => $made,
        'env' => laraworker_str($config->get('horizon.env')),
        'app_env' => laraworker_str($config->get('app.env')),
        'environments' => $environments,
        'environment_keys' => is_array($environments) ? array_map('strval', array_keys($environments)) : null,
        'defaults' => $config->get('horizon.defaults'),
        'basename' => $basename,
    ];
}

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
    $record = 'Laraworker\\Bridge\\Metadata\\JobMetadata';
    $answer['bridge'] = [
        'queue' => laraworker_str($bridge['queue'] ?? null),
        'connection' => laraworker_str($bridge['connection'] ?? null),
        'jobs' => $jobs,
        // The provider registered in the app (config('laraworker') alone
        // can be a published file without the package).
        'installed' => class_exists($provider) && method_exists($app, 'getProviders') && $app->getProviders($provider) !== [],
        'capabilities' => class_exists($provider) && defined($provider.'::CAPABILITIES')
            ? array_values(array_filter((array) constant($provider.'::CAPABILITIES'), 'is_string')) : [],
        // The version ("v") of the payload key the bridge records.
        'record_version' => class_exists($record) && defined($record.'::VERSION') ? (int) constant($record.'::VERSION') : 0,
        'hooks_queue' => laraworker_hooks_queue($config, $bridge),
        'route_batches_with_callbacks' => (bool) ($bridge['route_batches_with_callbacks'] ?? false),
        // Which jobs the bridge records: 'all' or 'routed' (null: a bridge
        // that predates the setting, which records the routed ones).
        'record' => laraworker_str($bridge['record'] ?? null) ?? 'routed',
    ];
}

/**
 * One of Pulse's recorders as Pulse::register takes it: null when it is
 * not registered (absent, false, or 'enabled' falsy), else its settings. A
 * threshold array becomes a list of [pattern, ms] pairs, in order (the first
 * pattern that matches wins; JSON objects lose their order in Go).
 */
function laraworker_pulse_recorder($recorder)
{
    if ($recorder === null || $recorder === false || (is_array($recorder) && ! ($recorder['enabled'] ?? true))) {
        return null;
    }
    $recorder = is_array($recorder) ? $recorder : [];
    $threshold = $recorder['threshold'] ?? null;
    if (is_array($threshold)) {
        $threshold = array_map(fn ($pattern, $ms) => ['pattern' => (string) $pattern, 'ms' => $ms], array_keys($threshold), array_values($threshold));
    }

    return [
        'sample_rate' => $recorder['sample_rate'] ?? null,
        'ignore' => array_values((array) ($recorder['ignore'] ?? [])),
        'threshold' => $threshold,
    ];
}

// Laravel Pulse, when installed: what its Queues and SlowJobs recorders
// record and where Pulse writes (Go records the same for the jobs it runs).
$pulseDb = [];
if (class_exists('Laravel\Pulse\Pulse')) {
    $pulseConnection = laraworker_str($config->get('pulse.storage.database.connection')) ?? laraworker_str($config->get('database.default'));
    $pulseDb = (array) $config->get("database.connections.{$pulseConnection}", []);
    $pulseDb = (new Illuminate\Support\ConfigurationUrlParser)->parseConfiguration($pulseDb);
    $recorders = (array) $config->get('pulse.recorders', []);
    $answer['pulse'] = [
        'registered' => method_exists($app, 'getProviders') && $app->getProviders('Laravel\Pulse\PulseServiceProvider') !== [],
        'enabled' => (bool) $config->get('pulse.enabled'),
        'queues' => laraworker_pulse_recorder($recorders['Laravel\Pulse\Recorders\Queues'] ?? null),
        'slow_jobs' => laraworker_pulse_recorder($recorders['Laravel\Pulse\Recorders\SlowJobs'] ?? null),
        'ingest' => [
            'driver' => $config->get('pulse.ingest.driver'),
            'buffer' => $config->get('pulse.ingest.buffer'),
            'trim_lottery' => $config->get('pulse.ingest.trim.lottery') ?? $config->get('pulse.ingest.trim_lottery'),
            'trim_keep' => $config->get('pulse.ingest.trim.keep'),
            'redis_connection' => laraworker_str($config->get('pulse.ingest.redis.connection')),
        ],
        'storage' => [
            'driver' => laraworker_str($config->get('pulse.storage.driver')),
            'chunk' => $config->get('pulse.storage.database.chunk'),
            'trim_keep' => $config->get('pulse.storage.trim.keep'),
        ],
        'redis_prefix' => laraworker_str($config->get('database.redis.options.prefix')),
        'db_connection' => $pulseConnection,
        'db' => [
            'driver' => laraworker_str($pulseDb['driver'] ?? null),
            'host' => laraworker_str($pulseDb['host'] ?? null),
            'port' => laraworker_str($pulseDb['port'] ?? null),
            'database' => laraworker_str($pulseDb['database'] ?? null),
            'username' => laraworker_str($pulseDb['username'] ?? null),
            'unix_socket' => laraworker_str($pulseDb['unix_socket'] ?? null),
            'prefix' => laraworker_str($pulseDb['prefix'] ?? null),
            'version' => laraworker_str($pulseDb['version'] ?? null),
        ],
    ];
}

// Horizon's long-wait thresholds (config('horizon.waits'), "connection:queue"
// => seconds), which laraworker's long-wait alerts take when Horizon is
// installed.
$answer['horizon_waits'] = class_exists('Laravel\Horizon\Horizon') ? (array) $config->get('horizon.waits', []) : null;

echo json_encode($answer, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";

/**
 * The credentials in a config array, however deep: the values of its
 * "password", "secret" and "token" keys (database and Redis connections,
 * SQS's AWS secret and session token) and the password of every "url".
 * Only UTF-8 strings: one that does not encode must not cost the others.
 */
function laraworker_credentials($value, $key = null): array
{
    if (is_array($value)) {
        $out = [];
        foreach ($value as $k => $v) {
            $out = array_merge($out, laraworker_credentials($v, $k));
        }

        return $out;
    }
    if (! is_scalar($value) || is_bool($value) || (string) $value === '' || ! preg_match('//u', (string) $value)) {
        return [];
    }
    $value = (string) $value;
    if (in_array($key, ['password', 'secret', 'token'], true)) {
        return [$value];
    }
    if ($key === 'url' && is_string($pass = parse_url($value, PHP_URL_PASS)) && $pass !== '') {
        return array_values(array_unique([$pass, rawurldecode($pass)]));
    }

    return [];
}

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
        // Pulse's database connection (see $answer['pulse']).
        'pulse_db_password' => laraworker_str($pulseDb['password'] ?? null),
        // An object even when empty or a list: Go reads a JSON object.
        'redis_config' => $redisConfig === null ? null : (object) $redisConfig,
        // The served sqs connection's array, as SqsConnector gets it.
        'sqs_config' => $isSqs && json_encode($qc, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE) !== false ? (object) $qc : null,
        // Every other credential the app's config holds, which laraworker
        // never shows (pages, logs, handlers' input): every database and
        // Redis connection's, the SQS connections' AWS secret and token.
        'credentials' => array_values(array_unique(array_merge(
            laraworker_credentials((array) $config->get('database.connections', [])),
            laraworker_credentials((array) $config->get('database.redis', [])),
            laraworker_credentials((array) $config->get('queue.connections', [])),
            laraworker_credentials(['secret' => env('AWS_SECRET_ACCESS_KEY'), 'token' => env('AWS_SESSION_TOKEN')])
        ))),
    ], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE));
    fclose($secrets);
}
