<?php

// No Composer here: Debian's php-laravel-framework ships its own autoloaders
// under /usr/share/php (on the default include_path). Illuminate/autoload.php
// pulls in every component plus Carbon, Symfony, Monolog, SerializableClosure...
require_once 'Illuminate/autoload.php';

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
