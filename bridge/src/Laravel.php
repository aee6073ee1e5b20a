<?php

namespace Laraworker\Bridge;

/**
 * The Laravel version the app runs, for the few rules the bridge cannot
 * learn by calling Laravel's own code (see PROTOCOL.md, "Versions").
 */
final class Laravel
{
    /** @var string|null */
    private static $version;

    /**
     * Application::VERSION, e.g. "8.83.26"; "" when the app is not a
     * full Laravel (then every version rule takes its oldest form).
     */
    public static function version(): string
    {
        if (self::$version === null) {
            self::$version = class_exists(\Illuminate\Foundation\Application::class)
                ? (string) \Illuminate\Foundation\Application::VERSION
                : '';
        }

        return self::$version;
    }

    /**
     * Whether the app runs $version or later ("9.1", "12.32.0").
     */
    public static function atLeast(string $version): bool
    {
        $current = self::version();

        return $current !== '' && version_compare($current, $version, '>=');
    }
}
