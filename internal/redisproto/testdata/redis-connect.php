<?php

// Connects with the installed Laravel's own RedisManager (phpredis or
// predis, as an app would) for the differential tests of package
// redisqueue's connection settings: stdin is a JSON list of
// config('database.redis') arrays; for each, stdout gets one JSON line
// saying whether the "default" connection answered PING, with the error
// otherwise. Warnings become exceptions, as Laravel's HandleExceptions
// makes them. Give predis 1.x one config per process: it sets a TLS
// connection's SSL options on PHP's default stream context, so they
// carry over to the next connection of the process.
//
// Environment: ILLUMINATE_AUTOLOAD (default: Debian's php-laravel-framework
// autoloader).

require_once getenv('ILLUMINATE_AUTOLOAD') ?: 'Illuminate/autoload.php';
if (stream_resolve_include_path('Predis/autoload.php')) {
    require_once 'Predis/autoload.php';
}

use Illuminate\Container\Container;
use Illuminate\Redis\RedisManager;

set_error_handler(function ($level, $message, $file = '', $line = 0) {
    throw new ErrorException($message, 0, $level, $file, $line);
});

foreach (json_decode(stream_get_contents(STDIN), true) as $config) {
    try {
        $manager = new RedisManager(new Container, $config['client'] ?? 'phpredis', $config);
        $pong = $manager->connection('default')->command('ping');
        $reply = ['ok' => $pong === true || $pong === 'PONG' || $pong === '+PONG' || (is_object($pong) && (string) $pong === 'PONG')];
        if (! $reply['ok']) {
            $reply['error'] = 'PING answered '.json_encode($pong);
        }
    } catch (Throwable $e) {
        $reply = ['ok' => false, 'error' => get_class($e).': '.$e->getMessage()];
    }
    echo json_encode($reply), "\n";
}
