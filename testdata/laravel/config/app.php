<?php

return [
    'name' => env('APP_NAME', 'Laravel'),
    'env' => env('APP_ENV', 'production'),
    'debug' => (bool) env('APP_DEBUG', false),
    'url' => env('APP_URL', 'http://localhost'),
    'timezone' => 'UTC',
    'locale' => 'en',
    'fallback_locale' => 'en',

    // Encrypted jobs (ShouldBeEncrypted) use these. AES-256-CBC is the skeleton default;
    // the fixture generator switches to the other ciphers with APP_CIPHER.
    'key' => env('APP_KEY'),
    'cipher' => env('APP_CIPHER', 'AES-256-CBC'),

    // Only what a queue worker needs: no HTTP, views, sessions or mail.
    'providers' => [
        Illuminate\Bus\BusServiceProvider::class,
        Illuminate\Cache\CacheServiceProvider::class,
        Illuminate\Foundation\Providers\ConsoleSupportServiceProvider::class,
        Illuminate\Database\DatabaseServiceProvider::class,
        Illuminate\Encryption\EncryptionServiceProvider::class,
        Illuminate\Filesystem\FilesystemServiceProvider::class,
        Illuminate\Foundation\Providers\FoundationServiceProvider::class,
        Illuminate\Pipeline\PipelineServiceProvider::class,
        Illuminate\Queue\QueueServiceProvider::class,
        Illuminate\Redis\RedisServiceProvider::class,
        Illuminate\Translation\TranslationServiceProvider::class,
        Illuminate\Validation\ValidationServiceProvider::class,
        // Rate limiters and a JobFailed listener for the bridge's hook tests
        // (they touch only App\Jobs\Hooks\* jobs).
        App\Providers\HooksServiceProvider::class,
        // Queue::forward's table as Laravel 13.26 keeps it, when
        // TEST_QUEUE_FORWARDS is set (Laravel 8.83 has no forwards).
        App\Providers\QueueForwardsServiceProvider::class,
        // The laraworker bridge, when this app sits in the repository (no
        // package discovery without Composer). It routes nothing until a
        // config/laraworker.php lists job classes.
        ...(class_exists(Laraworker\Bridge\LaraworkerServiceProvider::class) ? [Laraworker\Bridge\LaraworkerServiceProvider::class] : []),
    ],

    'aliases' => [
        'App' => Illuminate\Support\Facades\App::class,
        'Artisan' => Illuminate\Support\Facades\Artisan::class,
        'Bus' => Illuminate\Support\Facades\Bus::class,
        'Cache' => Illuminate\Support\Facades\Cache::class,
        'Config' => Illuminate\Support\Facades\Config::class,
        'Crypt' => Illuminate\Support\Facades\Crypt::class,
        'DB' => Illuminate\Support\Facades\DB::class,
        'Log' => Illuminate\Support\Facades\Log::class,
        'Queue' => Illuminate\Support\Facades\Queue::class,
        'Schema' => Illuminate\Support\Facades\Schema::class,
    ],
];
