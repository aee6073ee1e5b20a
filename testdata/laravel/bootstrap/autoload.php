<?php

// No Composer here: Debian's php-laravel-framework ships its own autoloaders
// under /usr/share/php (on the default include_path). Illuminate/autoload.php
// pulls in every component plus Carbon, Symfony, Monolog, SerializableClosure...
require_once 'Illuminate/autoload.php';

// predis, when Debian's php-predis is installed (REDIS_CLIENT=predis: the
// e2e Redis Sentinel tests).
if (stream_resolve_include_path('Predis/autoload.php')) {
    require_once 'Predis/autoload.php';
}

// pheanstalk, when Debian's php-pda-pheanstalk is installed (the e2e
// beanstalkd tests): Illuminate/autoload.php looks for it under Pda/, where
// Debian does not put it.
if (stream_resolve_include_path('Pheanstalk/autoload.php')) {
    require_once 'Pheanstalk/autoload.php';
}

// PSR-4 for the app's own namespace, the part Composer would normally do.
spl_autoload_register(function ($class) {
    $prefix = 'App\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = dirname(__DIR__).'/app/'.str_replace('\\', '/', substr($class, strlen($prefix))).'.php';
    if (is_file($file)) {
        require $file;
    }
});

// The laraworker bridge (bridge/ at the root of this repository), as
// Composer would load it once installed from a path repository. Copies of
// this app that leave the repository behind simply run without it.
spl_autoload_register(function ($class) {
    $prefix = 'Laraworker\\Bridge\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = dirname(__DIR__, 3).'/bridge/src/'.str_replace('\\', '/', substr($class, strlen($prefix))).'.php';
    if (is_file($file)) {
        require $file;
    }
});

// aws-sdk-php's SqsClient, which Laravel's sqs driver needs: a stand-in
// for the tests (aws-sqs-shim/README.md) when aws-sdk-php is not
// installed (Debian does not package it).
if (! stream_resolve_include_path('Aws/Sqs/SqsClient.php')) {
    spl_autoload_register(function ($class) {
        if (strncmp($class, 'Aws\\', 4) !== 0) {
            return;
        }
        $file = dirname(__DIR__).'/aws-sqs-shim/'.str_replace('\\', '/', $class).'.php';
        if (is_file($file)) {
            require $file;
        }
    });
}
