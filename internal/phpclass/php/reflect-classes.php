<?php

// laraworker's reader of a Laravel app's job classes (Laravel 8-13, PHP 8.0+).
//
// laraworker runs it with the app's own PHP, the script on standard input:
//
//     php -d display_errors=stderr -- APP_DIR ENV_FILE [CLASS...] < reflect-classes.php
//
// It boots the app's console kernel as `php artisan` does (the app's service
// providers run), then only reflects: it never constructs a job, never
// unserializes a payload and never calls a method of the app's classes. The
// bodies of middleware(), uniqueId() and uniqueVia() are read as source
// tokens (token_get_all), not run. Model tables come from the models'
// declared $table / $primaryKey defaults, or Laravel's naming rule, without
// constructing a model. Classes are loaded through the app's autoloader,
// which includes their files, as any use of them would.
//
// The classes: the CLASS arguments, or else the routes of the bridge
// (config('laraworker.jobs')), where a parent class, an interface or a trait
// stands for every concrete job class under app/ that extends, implements or
// uses it. `--all-jobs` in place of the classes: every concrete ShouldQueue
// class under app/ and the app's composer.json autoload psr-4 folders whose
// objects are queued as themselves (each with the routes that match it);
// "skipped" lists the queued classes Laravel wraps in another command
// (listeners, mailables, notifications, broadcast events) and the files
// that do not load.
//
// stdout: one JSON object (no secrets). stderr: what the app printed while
// booting, and a "laraworker: ..." line when the script gives up.

$args = array_slice($argv, 1);
$appDir = $args[0] ?? '';
$envFile = $args[1] ?? '';
$named = array_values(array_filter(array_slice($args, 2), 'strlen'));
// --all-jobs instead of class names: every job class of the app.
$allJobs = $named === ['--all-jobs'];
if ($allJobs) {
    $named = [];
}

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

// Whatever loading a class prints must not mix with the answer either.
ob_start();

const LW_BRIDGE_PROVIDER = 'Laraworker\\Bridge\\LaraworkerServiceProvider';
const LW_OPTIONS = ['tries', 'backoff', 'timeout', 'maxExceptions', 'failOnTimeout', 'retryUntil', 'uniqueId', 'uniqueFor', 'deleteWhenMissingModels', 'afterCommit'];
const LW_METHODS = ['handle', 'failed', 'middleware', 'backoff', 'retryUntil', 'tries', 'uniqueId', 'uniqueFor', 'uniqueVia', 'displayName', 'tags', 'debounceId', 'debounceVia'];
const LW_INTERFACES = [
    'ShouldQueue' => 'Illuminate\\Contracts\\Queue\\ShouldQueue',
    'ShouldBeEncrypted' => 'Illuminate\\Contracts\\Queue\\ShouldBeEncrypted',
    'ShouldBeUnique' => 'Illuminate\\Contracts\\Queue\\ShouldBeUnique',
    'ShouldBeUniqueUntilProcessing' => 'Illuminate\\Contracts\\Queue\\ShouldBeUniqueUntilProcessing',
];
const LW_TRAITS = [
    'Batchable' => 'Illuminate\\Bus\\Batchable',
    'InteractsWithQueue' => 'Illuminate\\Queue\\InteractsWithQueue',
    'SerializesModels' => 'Illuminate\\Queue\\SerializesModels',
    'Dispatchable' => 'Illuminate\\Foundation\\Bus\\Dispatchable',
    'Queueable' => 'Illuminate\\Bus\\Queueable',
];

/** Whether a class or trait belongs to the framework (its members are not the job's own). */
function lw_framework(string $class): bool
{
    return strncmp($class, 'Illuminate\\', 11) === 0;
}

/** A value as JSON can carry it, as [ok, value]: enum cases become {"enum": class, "case": name}; not ok for objects, INF, NAN. */
function lw_json_value($v, int $depth = 0): array
{
    if ($depth > 32 || is_object($v) && ! $v instanceof UnitEnum || is_resource($v)) {
        return [false, null];
    }
    if ($v instanceof UnitEnum) {
        return [true, ['enum' => get_class($v), 'case' => $v->name]];
    }
    if (is_float($v) && (is_nan($v) || is_infinite($v)) || is_string($v) && preg_match('//u', $v) !== 1) {
        return [false, null]; // JSON has no INF, NAN or bytes that are not UTF-8
    }
    if (! is_array($v)) {
        return [true, $v];
    }
    $out = [];
    foreach ($v as $k => $item) {
        [$ok, $item] = lw_json_value($item, $depth + 1);
        if (! $ok) {
            return [false, null];
        }
        $out[$k] = $item;
    }

    return [true, $out];
}

/** A PHP value as PHP source, one line. */
function lw_php_text($v): string
{
    if ($v instanceof UnitEnum) {
        return '\\'.get_class($v).'::'.$v->name;
    }
    if (is_array($v)) {
        $parts = [];
        $list = array_keys($v) === range(0, count($v) - 1);
        foreach ($v as $k => $item) {
            $parts[] = ($list ? '' : var_export($k, true).' => ').lw_php_text($item);
        }

        return '['.implode(', ', $parts).']';
    }
    if ($v === null) {
        return 'null';
    }

    return is_object($v) ? get_class($v) : var_export($v, true);
}

/** The kind of a class-typed value: date, enum, model, model-collection, collection, closure, object, missing. */
function lw_class_kind(string $class): string
{
    if (! class_exists($class) && ! interface_exists($class) && ! (function_exists('enum_exists') && enum_exists($class))) {
        return 'missing';
    }
    if (is_a($class, DateTimeInterface::class, true)) {
        return 'date';
    }
    if ((function_exists('enum_exists') && enum_exists($class)) || in_array($class, ['UnitEnum', 'BackedEnum'], true)) {
        return 'enum';
    }
    if (is_a($class, 'Illuminate\\Database\\Eloquent\\Model', true)) {
        return 'model';
    }
    if (is_a($class, 'Illuminate\\Database\\Eloquent\\Collection', true)) {
        return 'model-collection';
    }
    if (is_a($class, 'Illuminate\\Support\\Collection', true)) {
        return 'collection';
    }
    if (is_a($class, Closure::class, true) || is_a($class, 'Laravel\\SerializableClosure\\SerializableClosure', true)) {
        return 'closure';
    }

    return 'object';
}

/** Where an Eloquent model lives, read from its declared defaults (Model::getTable's rule), never by constructing it. */
function lw_model(string $class): array
{
    $defaults = (new ReflectionClass($class))->getDefaultProperties();
    $table = $defaults['table'] ?? null;
    if (! is_string($table) || $table === '') {
        $table = Illuminate\Support\Str::snake(Illuminate\Support\Str::pluralStudly(class_basename($class)));
    }

    return [
        'class' => $class,
        'table' => $table,
        'key' => is_string($defaults['primaryKey'] ?? null) ? $defaults['primaryKey'] : 'id',
        'connection' => is_string($defaults['connection'] ?? null) ? $defaults['connection'] : null,
    ];
}

/** A declared type: its text, nullability and, for one class, what kind of value it holds. */
function lw_type(?ReflectionType $t, ReflectionClass $self): ?array
{
    if ($t === null) {
        return null;
    }
    $out = ['text' => (string) $t, 'nullable' => $t->allowsNull(), 'names' => []];
    $named = $t instanceof ReflectionNamedType ? [$t] : (method_exists($t, 'getTypes') ? $t->getTypes() : []);
    foreach ($named as $n) {
        if (! $n instanceof ReflectionNamedType) {
            $out['names'][] = ['name' => (string) $n, 'builtin' => false, 'kind' => 'object'];
            continue;
        }
        $name = $n->getName();
        if (in_array(strtolower($name), ['self', 'static'], true)) {
            $name = $self->getName();
        }
        if ($n->isBuiltin()) {
            $out['names'][] = ['name' => $name, 'builtin' => true];
            continue;
        }
        $entry = ['name' => $name, 'builtin' => false, 'kind' => lw_class_kind($name)];
        if ($entry['kind'] === 'model') {
            $entry['model'] = lw_model($name);
        }
        if ($entry['kind'] === 'enum' && function_exists('enum_exists') && enum_exists($name)) {
            $entry['enum_backing'] = (string) ((new ReflectionEnum($name))->getBackingType() ?? '');
            $entry['enum_cases'] = array_map(function ($c) {
                return $c->getName();
            }, (new ReflectionEnum($name))->getCases());
        }
        $out['names'][] = $entry;
    }

    return $out;
}

/** The traits a class uses, its parents' and their traits' traits. */
function lw_traits(string $class): array
{
    return array_values(class_uses_recursive($class));
}

// ---- source tokens -------------------------------------------------------

/** A file's namespace and imports (use A\B; use A\B as C; use A\{B, C as D};), by lower-cased alias. */
function lw_imports(string $file): array
{
    static $cache = [];
    if (isset($cache[$file])) {
        return $cache[$file];
    }
    $ns = '';
    $uses = [];
    $toks = lw_significant(token_get_all((string) @file_get_contents($file)));
    $n = count($toks);
    for ($i = 0; $i < $n; $i++) {
        $t = $toks[$i];
        if (is_array($t) && $t[0] === T_NAMESPACE) {
            $ns = '';
            for ($i++; $i < $n && $toks[$i] !== ';' && $toks[$i] !== '{'; $i++) {
                $ns .= is_array($toks[$i]) ? $toks[$i][1] : '';
            }
            continue;
        }
        if (is_array($t) && ($t[0] === T_CLASS || $t[0] === T_TRAIT || $t[0] === T_INTERFACE)) {
            break; // imports come before the class
        }
        if (! is_array($t) || $t[0] !== T_USE) {
            continue;
        }
        if (is_array($toks[$i + 1] ?? null) && in_array(strtolower($toks[$i + 1][1]), ['function', 'const'], true)) {
            continue;
        }
        $prefix = '';
        $current = '';
        $alias = null;
        $group = false;
        for ($i++; $i < $n; $i++) {
            $u = $toks[$i];
            if ($u === '{') {
                $prefix = rtrim($current, '\\').'\\';
                $current = '';
                $group = true;
                continue;
            }
            if ($u === ',' || $u === ';' || $u === '}') {
                if ($current !== '') {
                    $full = ltrim($prefix.$current, '\\');
                    $uses[strtolower($alias ?? lw_basename($full))] = $full;
                }
                $current = '';
                $alias = null;
                if ($u === ';' || ($u === '}' && $group && ($toks[$i + 1] ?? null) === ';')) {
                    break;
                }
                continue;
            }
            if (is_array($u) && $u[0] === T_AS) {
                $alias = is_array($toks[$i + 1] ?? null) ? $toks[$i + 1][1] : null;
                $i++;
                continue;
            }
            $current .= is_array($u) ? $u[1] : $u;
        }
    }

    return $cache[$file] = ['namespace' => trim($ns), 'uses' => $uses];
}

function lw_basename(string $class): string
{
    $p = strrpos($class, '\\');

    return $p === false ? $class : substr($class, $p + 1);
}

/** A class name as written in a file, resolved as PHP resolves it. */
function lw_resolve(string $name, array $imports, string $self): string
{
    $lower = strtolower($name);
    if (in_array($lower, ['self', 'static'], true)) {
        return $self;
    }
    if ($name !== '' && $name[0] === '\\') {
        return ltrim($name, '\\');
    }
    if (strncmp($lower, 'namespace\\', 10) === 0) {
        return ltrim($imports['namespace'].'\\'.substr($name, 10), '\\');
    }
    $first = strtolower(explode('\\', $name)[0]);
    if (isset($imports['uses'][$first])) {
        $rest = substr($name, strlen($first));

        return $imports['uses'][$first].$rest;
    }

    return ltrim($imports['namespace'].'\\'.$name, '\\');
}

/** Tokens without whitespace and comments. */
function lw_significant(array $toks): array
{
    $out = [];
    foreach ($toks as $t) {
        if (is_array($t) && in_array($t[0], [T_WHITESPACE, T_COMMENT, T_DOC_COMMENT], true)) {
            continue;
        }
        $out[] = $t;
    }

    return $out;
}

/** Tokens as one line of source: spaces where words meet, after commas and around arrows. */
function lw_text(array $toks): string
{
    $s = '';
    $prev = '';
    foreach ($toks as $t) {
        $text = is_array($t) ? $t[1] : $t;
        if ($prev !== '' && (preg_match('/[\w$]$/', $prev) && preg_match('/^[\w$\\\\]/', $text)
            || in_array($prev, [',', '=>'], true) || $text === '=>')) {
            $s .= ' ';
        }
        $s .= $text;
        $prev = $text;
    }

    return strlen($s) > 160 ? substr($s, 0, 157).'...' : $s;
}

/** The tokens of a method's body (between its braces), significant ones, or null; read once per method. */
function lw_method_body(ReflectionMethod $m): ?array
{
    static $cache = [];
    $key = $m->getDeclaringClass()->getName().'::'.$m->getName();
    if (! array_key_exists($key, $cache)) {
        $cache[$key] = lw_read_method_body($m);
    }

    return $cache[$key];
}

function lw_read_method_body(ReflectionMethod $m): ?array
{
    $file = $m->getFileName();
    if ($file === false || ! is_file($file)) {
        return null;
    }
    $lines = file($file);
    $src = implode('', array_slice($lines, $m->getStartLine() - 1, $m->getEndLine() - $m->getStartLine() + 1));
    $toks = lw_significant(token_get_all('<?php '.$src));
    $n = count($toks);
    for ($i = 0; $i < $n; $i++) {
        if (is_array($toks[$i]) && $toks[$i][0] === T_FUNCTION && is_array($toks[$i + 1] ?? null)
            && strcasecmp($toks[$i + 1][1], $m->getName()) === 0) {
            break;
        }
    }
    for (; $i < $n && $toks[$i] !== '{' && $toks[$i] !== ';'; $i++) {
    }
    if ($i >= $n || $toks[$i] !== '{') {
        return null; // abstract
    }
    $depth = 0;
    $body = [];
    for (; $i < $n; $i++) {
        $t = $toks[$i];
        if ($t === '{' || (is_array($t) && in_array($t[0], [T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES], true))) {
            $depth++;
            if ($depth === 1) {
                continue;
            }
        } elseif ($t === '}') {
            $depth--;
            if ($depth === 0) {
                return $body;
            }
        }
        $body[] = $t;
    }

    return null;
}

/**
 * The expression of a body that is `return EXPR;`, with at most simple
 * statements before it; [expr tokens, null] or [null, why].
 */
function lw_single_return(array $body): array
{
    $returns = [];
    $depth = 0;
    $control = false;
    foreach ($body as $i => $t) {
        if (in_array($t, ['{', '(', '['], true) || (is_array($t) && in_array($t[0], [T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES], true))) {
            $depth++;
        } elseif (in_array($t, ['}', ')', ']'], true)) {
            $depth--;
        } elseif (is_array($t) && $t[0] === T_RETURN) {
            $returns[] = [$i, $depth];
        } elseif (is_array($t) && in_array($t[0], [T_IF, T_SWITCH, T_FOR, T_FOREACH, T_WHILE, T_TRY, T_MATCH, T_YIELD], true) && $depth === 0) {
            $control = true;
        }
    }
    $top = array_filter($returns, function ($r) {
        return $r[1] === 0;
    });
    // Returns nested deeper belong to closures, or to blocks of control
    // statements, which are refused on their own.
    if (count($top) !== 1 || $control) {
        return [null, count($top) === 0 && ! $control ? 'it returns nothing Laravel reads' : 'it decides what to return at run time (several returns or conditions)'];
    }
    $start = reset($top)[0] + 1;
    $expr = [];
    $depth = 0;
    for ($i = $start; $i < count($body); $i++) {
        $t = $body[$i];
        if ($t === ';' && $depth === 0) {
            break;
        }
        if (in_array($t, ['{', '(', '['], true)) {
            $depth++;
        } elseif (in_array($t, ['}', ')', ']'], true)) {
            $depth--;
        }
        $expr[] = $t;
    }

    return [$expr, null];
}

/** Splits tokens on top-level commas. */
function lw_split(array $toks): array
{
    $items = [];
    $cur = [];
    $depth = 0;
    foreach ($toks as $t) {
        if ($t === ',' && $depth === 0) {
            $items[] = $cur;
            $cur = [];
            continue;
        }
        if (in_array($t, ['{', '(', '['], true) || (is_array($t) && in_array($t[0], [T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES], true))) {
            $depth++;
        } elseif (in_array($t, ['}', ')', ']'], true)) {
            $depth--;
        }
        $cur[] = $t;
    }
    if ($cur !== []) {
        $items[] = $cur;
    }

    return $items;
}

function lw_is_name($t): bool
{
    return is_array($t) && in_array($t[0], array_filter([T_STRING, T_STATIC,
        defined('T_NAME_QUALIFIED') ? T_NAME_QUALIFIED : null,
        defined('T_NAME_FULLY_QUALIFIED') ? T_NAME_FULLY_QUALIFIED : null,
        defined('T_NAME_RELATIVE') ? T_NAME_RELATIVE : null, ]), true);
}

/** A literal's PHP value (a string, a number, true/false/null), as [true, value], or [false] when the tokens are not one literal. */
function lw_literal(array $toks): array
{
    $negative = count($toks) === 2 && $toks[0] === '-';
    if (count($toks) !== 1 && ! $negative) {
        return [false];
    }
    $t = end($toks);
    if (is_array($t) && $t[0] === T_CONSTANT_ENCAPSED_STRING && ! $negative) {
        $body = substr($t[1], 1, -1);
        if ($t[1][0] === "'") {
            return [true, strtr($body, ["\\\\" => "\\", "\\'" => "'"])];
        }

        return [true, stripcslashes(str_replace('\\$', '$', $body))];
    }
    if (is_array($t) && in_array($t[0], [T_LNUMBER, T_DNUMBER], true)) {
        $text = strtolower(str_replace('_', '', $t[1]));
        if ($t[0] === T_DNUMBER) {
            $v = (float) $text;
        } elseif (strncmp($text, '0x', 2) === 0) {
            $v = hexdec(substr($text, 2));
        } elseif (strncmp($text, '0b', 2) === 0) {
            $v = bindec(substr($text, 2));
        } elseif ($text !== '0' && $text[0] === '0') {
            $v = octdec(ltrim($text, '0o'));
        } else {
            $v = (int) $text;
        }

        return [true, $negative ? -$v : $v];
    }
    if (is_array($t) && $t[0] === T_STRING && ! $negative && in_array(strtolower($t[1]), ['true', 'false', 'null'], true)) {
        return [true, ['true' => true, 'false' => false, 'null' => null][strtolower($t[1])]];
    }

    return [false];
}

/** The argument list after tokens[$i] === '(' : [args (token lists), index after ')']. */
function lw_call_args(array $toks, int $i): array
{
    $depth = 0;
    $inner = [];
    for ($n = count($toks); $i < $n; $i++) {
        $t = $toks[$i];
        if (in_array($t, ['(', '[', '{'], true)) {
            $depth++;
            if ($depth === 1) {
                continue;
            }
        } elseif (in_array($t, [')', ']', '}'], true)) {
            $depth--;
            if ($depth === 0) {
                return [lw_split($inner), $i + 1];
            }
        }
        $inner[] = $t;
    }

    return [lw_split($inner), $i];
}

/** One item of middleware()'s array: a class (new X / X::make), a closure, or something audit cannot read. */
function lw_middleware_item(array $toks, array $imports, string $self): array
{
    $text = lw_text($toks);
    // 'key' => value: the key does not matter.
    foreach ($toks as $i => $t) {
        if (is_array($t) && $t[0] === T_DOUBLE_ARROW && $i > 0 && ! in_array(true, array_map(function ($x) {
            return is_array($x) && in_array($x[0], [T_FN, T_FUNCTION], true);
        }, array_slice($toks, 0, $i)), true)) {
            $toks = array_slice($toks, $i + 1);
            break;
        }
    }
    while (($toks[0] ?? null) === '(') {
        array_shift($toks);
    }
    $first = $toks[0] ?? null;
    if (is_array($first) && $first[0] === T_STATIC && is_array($toks[1] ?? null) && in_array($toks[1][0], [T_FN, T_FUNCTION], true)) {
        $first = $toks[1];
    }
    if (is_array($first) && in_array($first[0], [T_FN, T_FUNCTION], true)) {
        return ['kind' => 'closure', 'expr' => $text];
    }
    if (is_array($first) && $first[0] === T_ELLIPSIS) {
        return ['kind' => 'unknown', 'expr' => $text, 'why' => 'spread from another value'];
    }
    $class = null;
    $method = null;
    $argsAt = null;
    if (is_array($first) && $first[0] === T_NEW && lw_is_name($toks[1] ?? null)) {
        $class = lw_resolve($toks[1][1], $imports, $self);
        $argsAt = ($toks[2] ?? null) === '(' ? 2 : null;
    } elseif (lw_is_name($first) && is_array($toks[1] ?? null) && $toks[1][0] === T_DOUBLE_COLON && is_array($toks[2] ?? null)) {
        $class = lw_resolve($first[1], $imports, $self);
        $method = $toks[2][1];
        $argsAt = ($toks[3] ?? null) === '(' ? 3 : null;
    }
    if ($class === null) {
        return ['kind' => 'unknown', 'expr' => $text, 'why' => 'not a new Class(...) or Class::method(...)'];
    }
    $out = ['kind' => 'class', 'class' => $class, 'expr' => $text, 'exists' => class_exists($class)];
    if ($method !== null) {
        $out['factory'] = $method;
    }
    $args = [];
    $after = count($toks);
    if ($argsAt !== null) {
        [$argToks, $after] = lw_call_args($toks, $argsAt);
        foreach ($argToks as $a) {
            $lit = lw_literal($a);
            $args[] = $lit[0] ? ['literal' => true, 'value' => $lit[1]] : ['literal' => false, 'expr' => lw_text($a)];
        }
    }
    $out['args'] = $args;
    // Calls chained on the instance: (new X)->releaseAfter(60)->dontRelease().
    $calls = [];
    $rest = array_slice($toks, $after);
    for ($i = 0; $i < count($rest); $i++) {
        if (is_array($rest[$i]) && in_array($rest[$i][0], [T_OBJECT_OPERATOR, T_NULLSAFE_OBJECT_OPERATOR], true) && is_array($rest[$i + 1] ?? null)) {
            $calls[] = $rest[$i + 1][1];
        }
    }
    $out['calls'] = $calls;
    if (in_array($class, ['Illuminate\\Queue\\Middleware\\RateLimited', 'Illuminate\\Queue\\Middleware\\RateLimitedWithRedis'], true)) {
        $name = $args[0] ?? null;
        if ($name !== null && $name['literal'] && is_string($name['value'])) {
            // RateLimiter::for() resolves the limiter; resolving it here
            // would open the cache store's connection. Unresolved, the app
            // registered no limiter at all.
            $registered = false;
            if (app()->resolved(Illuminate\Cache\RateLimiter::class)) {
                $registered = app(Illuminate\Cache\RateLimiter::class)->limiter($name['value']) !== null;
            }
            $out['limiter'] = ['name' => $name['value'], 'registered' => $registered];
        }
    }

    return $out;
}

/** What middleware() returns, read from its source. */
function lw_middleware(ReflectionClass $c): ?array
{
    if (! $c->hasMethod('middleware')) {
        return null;
    }
    $m = $c->getMethod('middleware');
    $declared = $m->getDeclaringClass()->getName();
    $out = ['declared_in' => $declared, 'file' => $m->getFileName() ?: null, 'line' => $m->getStartLine() ?: null, 'parsed' => false, 'items' => []];
    if (lw_framework($declared)) {
        return null;
    }
    $body = lw_method_body($m);
    if ($body === null) {
        $out['why'] = 'its source could not be read';

        return $out;
    }
    [$expr, $why] = lw_single_return($body);
    if ($expr === null) {
        $out['why'] = $why;

        return $out;
    }
    $open = $expr[0] ?? null;
    $close = end($expr);
    if ($open === '[' && $close === ']') {
        $inner = array_slice($expr, 1, -1);
    } elseif (is_array($open) && $open[0] === T_ARRAY && ($expr[1] ?? null) === '(' && $close === ')') {
        $inner = array_slice($expr, 2, -1);
    } else {
        $out['why'] = 'it returns '.lw_text($expr).', not an array literal';

        return $out;
    }
    $imports = lw_imports($m->getFileName());
    $out['parsed'] = true;
    foreach (lw_split($inner) as $item) {
        if ($item !== []) {
            $out['items'][] = lw_middleware_item($item, $imports, $c->getName());
        }
    }

    return $out;
}

/** uniqueId(): the property it returns when it is `return $this->x;` (or a string cast of it). */
function lw_returned_property(ReflectionMethod $m): ?string
{
    $body = lw_method_body($m);
    if ($body === null) {
        return null;
    }
    [$expr] = lw_single_return($body);
    if ($expr === null) {
        return null;
    }
    if (is_array($expr[0] ?? null) && in_array($expr[0][0], [T_STRING_CAST], true)) {
        array_shift($expr);
    } elseif (is_array($expr[0] ?? null) && $expr[0][0] === T_STRING && strtolower($expr[0][1]) === 'strval' && ($expr[1] ?? null) === '(' && end($expr) === ')') {
        $expr = array_slice($expr, 2, -1);
    }
    if (count($expr) === 3 && is_array($expr[0]) && $expr[0][1] === '$this' && is_array($expr[1]) && $expr[1][0] === T_OBJECT_OPERATOR && is_array($expr[2]) && $expr[2][0] === T_STRING) {
        return $expr[2][1];
    }

    return null;
}

/** uniqueVia(): the cache store it names when it is Cache::store('x') / Cache::driver('x') / cache()->store('x'). */
function lw_unique_via(ReflectionMethod $m): array
{
    $body = lw_method_body($m);
    $expr = $body === null ? null : lw_single_return($body)[0];
    if ($expr === null) {
        return ['store' => null, 'expr' => null];
    }
    $text = lw_text($expr);
    $store = null;
    $default = false;
    $n = count($expr);
    for ($i = 0; $i < $n; $i++) {
        $t = $expr[$i];
        if (is_array($t) && in_array($t[0], [T_DOUBLE_COLON, T_OBJECT_OPERATOR], true) && is_array($expr[$i + 1] ?? null)
            && in_array(strtolower($expr[$i + 1][1]), ['store', 'driver'], true) && ($expr[$i + 2] ?? null) === '(') {
            [$args] = lw_call_args($expr, $i + 2);
            if ($args === [] || $args === [[]]) {
                $default = true;
            } else {
                $lit = lw_literal($args[0]);
                if ($lit[0] && (is_string($lit[1]) || $lit[1] === null)) {
                    $store = $lit[1];
                    $default = $lit[1] === null;
                }
            }
        }
    }

    return ['store' => $store, 'default' => $default, 'expr' => $text];
}

// ---- classes -------------------------------------------------------------

/** Where a property comes from: the trait that declares it, else its declaring class. */
function lw_property_origin(ReflectionProperty $p, ReflectionClass $c): string
{
    $declaring = $p->getDeclaringClass();
    foreach (lw_traits($declaring->getName()) as $trait) {
        if ((new ReflectionClass($trait))->hasProperty($p->getName())) {
            return $trait;
        }
    }

    return $declaring->getName();
}

/** Whether tokens[$i..] are `$this->prop =` (a plain assignment). */
function lw_this_assign(array $toks, int $i, string $prop): bool
{
    $v = $toks[$i] ?? null;
    $arrow = $toks[$i + 1] ?? null;
    $name = $toks[$i + 2] ?? null;

    return is_array($v) && $v[0] === T_VARIABLE && $v[1] === '$this'
        && is_array($arrow) && $arrow[0] === T_OBJECT_OPERATOR
        && is_array($name) && $name[0] === T_STRING && $name[1] === $prop
        && ($toks[$i + 3] ?? null) === '=';
}

/** Whether tokens[$i..] are `parent::__construct(`. */
function lw_parent_construct(array $toks, int $i): bool
{
    $p = $toks[$i] ?? null;
    $m = $toks[$i + 2] ?? null;

    return is_array($p) && strcasecmp($p[1], 'parent') === 0
        && is_array($toks[$i + 1] ?? null) && $toks[$i + 1][0] === T_DOUBLE_COLON
        && is_array($m) && strcasecmp($m[1], '__construct') === 0 && ($toks[$i + 3] ?? null) === '(';
}

/**
 * Whether the constructor `new` runs always assigns $this->$prop: a
 * statement `$this->prop = ...;` at the top level of its body (not inside a
 * block, a condition or a closure) with no return anywhere before it, or a
 * top-level parent::__construct(...) whose constructor does. Anything else
 * (a conditional assignment, a loop, a helper method) counts as "may stay
 * uninitialised": PHP's serialize() then leaves the property out.
 */
function lw_assigned_by_constructor(ReflectionClass $c, string $prop, int $limit = 8): bool
{
    $ctor = $c->getConstructor();
    $body = $ctor === null || $limit === 0 ? null : lw_method_body($ctor);
    if ($body === null) {
        return false;
    }
    $depth = 0;
    $start = true;
    foreach ($body as $i => $t) {
        if (is_array($t) && $t[0] === T_RETURN) {
            return false;
        }
        if ($depth === 0 && $start) {
            if (lw_this_assign($body, $i, $prop)) {
                return true;
            }
            $parent = $ctor->getDeclaringClass()->getParentClass();
            if (lw_parent_construct($body, $i) && $parent !== false && lw_assigned_by_constructor($parent, $prop, $limit - 1)) {
                return true;
            }
        }
        $start = false;
        if (in_array($t, ['{', '(', '['], true) || (is_array($t) && in_array($t[0], [T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES], true))) {
            $depth++;
        } elseif (in_array($t, ['}', ')', ']'], true)) {
            $depth--;
        }
        $start = $depth === 0 && ($t === ';' || $t === '}');
    }

    return false;
}

/** Whether any file of the class (its own, its parents', their traits') unsets $this->$prop. */
function lw_unsets(ReflectionClass $c, string $prop): bool
{
    $files = [];
    for ($k = $c; $k !== false; $k = $k->getParentClass()) {
        $files[] = $k->getFileName();
        foreach (lw_traits($k->getName()) as $trait) {
            $files[] = (new ReflectionClass($trait))->getFileName();
        }
    }
    foreach (array_unique(array_filter($files)) as $file) {
        if (! lw_framework_file($file) && isset(lw_file_unsets($file)[$prop])) {
            return true;
        }
    }

    return false;
}

/** The properties a file unsets (`unset($this->x)`), by name; read once per file. */
function lw_file_unsets(string $file): array
{
    static $cache = [];
    if (isset($cache[$file])) {
        return $cache[$file];
    }
    $out = [];
    $toks = lw_significant(token_get_all((string) @file_get_contents($file)));
    foreach ($toks as $i => $t) {
        if (! is_array($t) || $t[0] !== T_UNSET) {
            continue;
        }
        [$args] = lw_call_args($toks, $i + 1);
        foreach ($args as $a) {
            if (count($a) === 3 && is_array($a[2]) && lw_this_assign([$a[0], $a[1], $a[2], '='], 0, $a[2][1])) {
                $out[$a[2][1]] = true;
            }
        }
    }

    return $cache[$file] = $out;
}

/** Whether a file is the framework's (its classes never unset a job's properties). */
function lw_framework_file(string $file): bool
{
    return strpos(str_replace('\\', '/', $file), '/Illuminate/') !== false;
}

/**
 * Whether a property may be absent from a serialized job although it has no
 * default: typed without a default, and not always assigned when the job is
 * constructed (PHP leaves uninitialised properties out, SerializesModels
 * too), or unset somewhere.
 */
function lw_may_be_uninitialized(ReflectionProperty $p, ReflectionClass $c, bool $promoted): bool
{
    if (! $p->hasType() || $p->hasDefaultValue()) {
        return false;
    }
    if (lw_unsets($c, $p->getName())) {
        return true;
    }

    return ! $promoted && ! lw_assigned_by_constructor($c, $p->getName());
}

function lw_property(ReflectionProperty $p, ReflectionClass $c): array
{
    $origin = lw_property_origin($p, $c);
    if (lw_framework($origin)) {
        return ['name' => $p->getName(), 'declared_in' => $origin, 'framework' => true];
    }
    $out = [
        'name' => $p->getName(),
        'visibility' => $p->isPrivate() ? 'private' : ($p->isProtected() ? 'protected' : 'public'),
        'declared_in' => $origin,
        'framework' => lw_framework($origin),
        'option' => in_array($p->getName(), LW_OPTIONS, true),
        'type' => lw_type($p->getType(), $c),
        'promoted' => method_exists($p, 'isPromoted') && $p->isPromoted(),
        'readonly' => method_exists($p, 'isReadOnly') && $p->isReadOnly(),
        'has_default' => $p->hasDefaultValue(),
    ];
    if ($p->hasDefaultValue()) {
        $d = $p->getDefaultValue();
        [$ok, $json] = lw_json_value($d);
        $out['default'] = $json;
        $out['default_json_ok'] = $ok;
        $out['default_php'] = lw_php_text($d);
        // The default as serialize() writes it: what a job that left the
        // property out holds, for defaults JSON cannot say (INF, bytes, enums
        // in arrays).
        $out['default_serialized'] = base64_encode(serialize($d));
    }
    $out['may_be_uninitialized'] = lw_may_be_uninitialized($p, $c, $out['promoted']);
    if ($out['promoted']) {
        foreach ($c->getConstructor() ? $c->getConstructor()->getParameters() : [] as $param) {
            if ($param->getName() === $p->getName() && $param->isDefaultValueAvailable()) {
                try {
                    $out['param_default_php'] = lw_php_text($param->getDefaultValue());
                } catch (Throwable $e) {
                }
            }
        }
    }
    $doc = $p->getDocComment();
    if ($doc !== false && preg_match('/@var\s+([^\s*]+)/', $doc, $m)) {
        $out['doc_type'] = $m[1];
        if ($p->getType() === null && $p->getDeclaringClass()->getFileName()) {
            $imports = lw_imports($p->getDeclaringClass()->getFileName());
            foreach (explode('|', $m[1]) as $name) {
                $name = preg_replace('/(\[\]|<.*)$/', '', $name);
                if ($name === '' || ! preg_match('/^\\\\?[A-Za-z_][A-Za-z0-9_\\\\]*$/', $name) || in_array(strtolower($name), ['int', 'string', 'float', 'bool', 'array', 'mixed', 'null', 'false', 'true', 'callable', 'iterable', 'object'], true)) {
                    continue;
                }
                $resolved = lw_resolve($name, $imports, $c->getName());
                if (lw_class_kind($resolved) === 'model') {
                    $out['doc_model'] = lw_model($resolved);
                }
            }
        }
    }

    return $out;
}

function lw_attributes($reflector): array
{
    if (! method_exists($reflector, 'getAttributes')) {
        return [];
    }
    $out = [];
    foreach ($reflector->getAttributes() as $a) {
        $args = [];
        try {
            foreach ($a->getArguments() as $k => $arg) {
                $args[$k] = lw_json_value($arg)[1];
            }
        } catch (Throwable $e) {
            $args = null; // an argument names a constant the app lacks
        }
        $out[] = ['name' => $a->getName(), 'args' => $args];
    }

    return $out;
}

function lw_class(string $name, array $routedBy): array
{
    $out = ['class' => $name, 'routed_by' => $routedBy];
    try {
        if (! class_exists($name)) {
            $out['error'] = interface_exists($name) || trait_exists($name)
                ? 'an interface or trait, not a job class'
                : 'no such class (the app\'s autoloader does not find it)';

            return $out;
        }
        $c = new ReflectionClass($name);
    } catch (Throwable $e) {
        $out['error'] = get_class($e).': '.$e->getMessage();

        return $out;
    }
    $out['class'] = $c->getName(); // the declared spelling
    $out['file'] = $c->getFileName() ?: null;
    $out['abstract'] = $c->isAbstract();
    $out['parents'] = array_values(class_parents($name));
    $traits = lw_traits($name);
    $out['traits'] = [];
    foreach (LW_TRAITS as $short => $trait) {
        $out['traits'][$short] = in_array($trait, $traits, true);
    }
    $out['all_traits'] = $traits;
    $out['interfaces'] = [];
    foreach (LW_INTERFACES as $short => $iface) {
        $out['interfaces'][$short] = interface_exists($iface) && $c->implementsInterface($iface);
    }
    $out['attributes'] = lw_attributes($c);

    $out['properties'] = [];
    foreach ($c->getProperties() as $p) {
        if (! $p->isStatic()) {
            $out['properties'][] = lw_property($p, $c);
        }
    }

    $out['methods'] = [];
    foreach (LW_METHODS as $method) {
        if ($c->hasMethod($method)) {
            $m = $c->getMethod($method);
            $declared = $m->getDeclaringClass()->getName();
            $out['methods'][$method] = ['declared_in' => $declared, 'framework' => lw_framework($declared), 'line' => $m->getStartLine() ?: null];
        }
    }
    $out['methods'] = (object) $out['methods']; // {} when empty, not []
    $out['middleware'] = lw_middleware($c);
    if ($c->hasMethod('uniqueId') && ! lw_framework($c->getMethod('uniqueId')->getDeclaringClass()->getName())) {
        $out['unique_id_property'] = lw_returned_property($c->getMethod('uniqueId'));
    }
    if ($c->hasMethod('uniqueVia') && ! lw_framework($c->getMethod('uniqueVia')->getDeclaringClass()->getName())) {
        $out['unique_via'] = lw_unique_via($c->getMethod('uniqueVia'));
    }

    return $out;
}

// ---- which classes -------------------------------------------------------

/** Every class declared under app/, by name, read from the files' tokens. */
function lw_app_classes(string $dir): array
{
    $found = [];
    if (! is_dir($dir)) {
        return $found;
    }
    $it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($dir, FilesystemIterator::SKIP_DOTS));
    $files = 0;
    foreach ($it as $file) {
        if (! $file->isFile() || substr($file->getFilename(), -4) !== '.php' || ++$files > 20000) {
            continue;
        }
        $toks = lw_significant(token_get_all((string) file_get_contents($file->getPathname())));
        $ns = '';
        foreach ($toks as $i => $t) {
            if (is_array($t) && $t[0] === T_NAMESPACE) {
                $ns = '';
                for ($j = $i + 1; isset($toks[$j]) && $toks[$j] !== ';' && $toks[$j] !== '{'; $j++) {
                    $ns .= is_array($toks[$j]) ? $toks[$j][1] : '';
                }
            }
            if (is_array($t) && $t[0] === T_CLASS && is_array($toks[$i + 1] ?? null) && $toks[$i + 1][0] === T_STRING
                && ! (is_array($toks[$i - 1] ?? null) && in_array($toks[$i - 1][0], [T_DOUBLE_COLON, T_NEW], true))) {
                $found[] = ltrim(trim($ns).'\\'.$toks[$i + 1][1], '\\');
            }
        }
    }
    sort($found);

    return array_values(array_unique($found));
}

/** The folders the app's own classes live in: app/ and the psr-4 folders of the app's composer.json (not its dependencies'). */
function lw_source_dirs($app): array
{
    $dirs = [$app->path()];
    $composer = json_decode((string) @file_get_contents($app->basePath('composer.json')), true);
    foreach ((array) ($composer['autoload']['psr-4'] ?? []) as $paths) {
        foreach ((array) $paths as $path) {
            if (is_string($path)) {
                $dirs[] = $app->basePath($path);
            }
        }
    }
    $real = [];
    foreach ($dirs as $d) {
        $r = realpath($d);
        if ($r !== false && is_dir($r) && ! in_array($r, $real, true)) {
            $real[] = $r;
        }
    }
    // A folder inside another is read with it.
    return array_values(array_filter($real, function ($d) use ($real) {
        foreach ($real as $o) {
            if ($o !== $d && strncmp($d, $o.DIRECTORY_SEPARATOR, strlen($o) + 1) === 0) {
                return false;
            }
        }

        return true;
    }));
}

/** The classes the app's event dispatcher has as listeners, by lower-cased name. */
function lw_listener_classes($app): array
{
    $out = [];
    $events = $app['events'];
    if (method_exists($events, 'getRawListeners')) {
        $all = $events->getRawListeners();
    } elseif (property_exists($events, 'listeners')) {
        // Before 9.x the dispatcher keeps only the closures it made of each
        // listener; the listener is the closure's `use ($listener)`.
        $prop = new ReflectionProperty($events, 'listeners');
        $prop->setAccessible(true);
        $all = (array) $prop->getValue($events);
    } else {
        return $out;
    }
    foreach ($all as $listeners) {
        foreach ((array) $listeners as $l) {
            if ($l instanceof Closure) {
                $l = (new ReflectionFunction($l))->getStaticVariables()['listener'] ?? null;
            }
            $name = is_string($l) ? explode('@', $l)[0] : (is_array($l) && is_string($l[0] ?? null) ? $l[0] : null);
            if ($name !== null) {
                $out[strtolower(ltrim($name, '\\'))] = true;
            }
        }
    }

    return $out;
}

/** Why Laravel queues a ShouldQueue class inside another command, or null when it queues the class's own objects. */
function lw_wrapped(string $class, array $listeners): ?string
{
    $wrappers = [
        'Illuminate\\Mail\\Mailable' => 'a mailable: Laravel queues it inside Illuminate\\Mail\\SendQueuedMailable',
        'Illuminate\\Notifications\\Notification' => 'a notification: Laravel queues it inside Illuminate\\Notifications\\SendQueuedNotifications',
        'Illuminate\\Contracts\\Broadcasting\\ShouldBroadcast' => 'a broadcast event: Laravel queues it inside Illuminate\\Broadcasting\\BroadcastEvent',
    ];
    foreach ($wrappers as $base => $why) {
        if (is_a($class, $base, true)) {
            return $why;
        }
    }
    if (isset($listeners[strtolower($class)])) {
        return 'an event listener: Laravel queues it inside Illuminate\\Events\\CallQueuedListener';
    }

    return null;
}

/** Every job class of the app, and what was left out and why: [classes, skipped]. */
function lw_all_jobs($app): array
{
    $jobs = [];
    $skipped = [];
    $listeners = lw_listener_classes($app);
    foreach (lw_source_dirs($app) as $dir) {
        foreach (lw_app_classes($dir) as $class) {
            try {
                if (! class_exists($class)) {
                    continue; // not where the autoloader looks: no worker could load it either
                }
                $c = new ReflectionClass($class);
                if ($c->isAbstract() || ! $c->implementsInterface('Illuminate\\Contracts\\Queue\\ShouldQueue')) {
                    continue;
                }
            } catch (Throwable $e) {
                $skipped[] = ['class' => $class, 'why' => 'it does not load: '.get_class($e).': '.$e->getMessage()];
                continue;
            }
            $why = lw_wrapped($class, $listeners);
            if ($why !== null) {
                $skipped[] = ['class' => $class, 'why' => $why];
                continue;
            }
            $jobs[] = $class;
        }
    }

    return [array_values(array_unique($jobs)), $skipped];
}

/** Whether a job class is one a route entry matches (its class, a parent, an interface or a trait). */
function lw_matches(string $class, string $route): bool
{
    return strcasecmp($class, $route) === 0 || is_subclass_of($class, $route)
        || in_array(strtolower($route), array_map('strtolower', lw_traits($class)), true);
}

/** A concrete job class: one the bridge's routes could send somewhere. */
function lw_is_job(string $class): bool
{
    try {
        $c = new ReflectionClass($class);
    } catch (Throwable $e) {
        return false;
    }

    return ! $c->isAbstract() && ! $c->isInterface() && ! $c->isTrait()
        && ($c->implementsInterface('Illuminate\\Contracts\\Queue\\ShouldQueue') || method_exists($class, 'onQueue'));
}

// Whatever throws from here on is reported as the script's own error:
// stdout then holds nothing but the answer, or nothing.
set_exception_handler(function (Throwable $e) use ($stderr) {
    fwrite($stderr, (string) ob_get_clean());
    fwrite($stderr, 'laraworker: '.get_class($e).': '.$e->getMessage().' in '.$e->getFile().':'.$e->getLine()."\n");
    exit(1);
});

$config = $app['config'];
$bridgeConfig = $config->get('laraworker');
$providerLoaded = class_exists(LW_BRIDGE_PROVIDER) && method_exists($app, 'getProviders') && $app->getProviders(LW_BRIDGE_PROVIDER) !== [];
$capabilities = [];
if (class_exists(LW_BRIDGE_PROVIDER) && defined(LW_BRIDGE_PROVIDER.'::CAPABILITIES')) {
    $capabilities = array_values(array_filter((array) constant(LW_BRIDGE_PROVIDER.'::CAPABILITIES'), 'is_string'));
}
$routes = [];
if (is_array($bridgeConfig)) {
    foreach ((array) ($bridgeConfig['jobs'] ?? []) as $class => $target) {
        if (is_int($class)) {
            [$class, $target] = [$target, null];
        }
        if (is_string($class)) {
            $routes[] = [
                'class' => ltrim($class, '\\'),
                'queue' => is_array($target) ? ($target['queue'] ?? null) : $target,
                'connection' => is_array($target) ? ($target['connection'] ?? null) : null,
            ];
        }
    }
}

$stores = [];
foreach ((array) $config->get('cache.stores') as $store => $settings) {
    $stores[$store] = is_array($settings) && is_string($settings['driver'] ?? null) ? $settings['driver'] : null;
}

$answer = [
    'version' => $app->version(),
    'app_dir' => $appDir,
    'bridge' => [
        'installed' => $providerLoaded,
        'config' => is_array($bridgeConfig),
        'capabilities' => $capabilities,
        'queue' => is_array($bridgeConfig) && is_string($bridgeConfig['queue'] ?? null) ? $bridgeConfig['queue'] : null,
        'routes' => $routes,
    ],
    'cache' => [
        'default' => is_string($config->get('cache.default')) ? $config->get('cache.default') : null,
        'limiter' => is_string($config->get('cache.limiter')) ? $config->get('cache.limiter') : null,
        'stores' => (object) $stores,
    ],
    'classes' => [],
    'unmatched_routes' => [],
    'skipped' => [],
];

$wanted = []; // class => routes that match it
if ($named !== []) {
    foreach ($named as $class) {
        $wanted[ltrim($class, '\\')] = [];
    }
} elseif ($allJobs) {
    [$jobs, $answer['skipped']] = lw_all_jobs($app);
    foreach ($jobs as $class) {
        $wanted[$class] = [];
    }
    foreach ($routes as $route) {
        $r = $route['class'];
        $matched = false;
        if (class_exists($r) && lw_is_job($r) && ! isset($wanted[$r])) {
            $wanted[$r] = []; // a routed job class outside the app's folders
        }
        foreach (array_keys($wanted) as $class) {
            if (lw_matches($class, $r)) {
                $wanted[$class][] = $r;
                $matched = true;
            }
        }
        if (! $matched) {
            $answer['unmatched_routes'][] = $r;
        }
    }
} else {
    $appClasses = null;
    foreach ($routes as $route) {
        $r = $route['class'];
        $matched = false;
        if (class_exists($r) && lw_is_job($r)) {
            $wanted[$r][] = $r;
            $matched = true;
        }
        if (class_exists($r) || interface_exists($r) || trait_exists($r)) {
            if ($appClasses === null) {
                $appClasses = lw_app_classes($app->path());
            }
            foreach ($appClasses as $candidate) {
                try {
                    $match = strcasecmp($candidate, $r) !== 0 && class_exists($candidate) && lw_is_job($candidate) && lw_matches($candidate, $r);
                } catch (Throwable $e) {
                    $match = false; // a file under app/ that does not load (a missing parent class) is no job the bridge routes
                }
                if ($match) {
                    $wanted[$candidate][] = $r;
                    $matched = true;
                }
            }
        }
        if (! $matched) {
            $answer['unmatched_routes'][] = $r;
        }
    }
}
foreach ($wanted as $class => $routedBy) {
    try {
        $entry = lw_class($class, array_values(array_unique($routedBy)));
        if ($named !== [] && ! isset($entry['error'])) {
            // The bridge's routes that match a class named on the command
            // line: its jobs carry the bridge's record even when the bridge
            // records only the routed classes.
            $entry['bridge_routes'] = array_values(array_filter(array_column($routes, 'class'), function ($route) use ($class) {
                return lw_matches($class, $route);
            }));
        }
        $answer['classes'][] = $entry;
    } catch (Throwable $e) {
        $answer['classes'][] = ['class' => $class, 'routed_by' => $routedBy, 'error' => get_class($e).': '.$e->getMessage()];
    }
}

// A class named on the command line that the app does not have gets the
// app's concrete job classes beside it, for a "did you mean" (laraworker
// work checks the classes of its routes at start).
$absent = false;
foreach (array_keys($wanted) as $class) {
    $absent = $absent || ($named !== [] && ! class_exists($class) && ! interface_exists($class) && ! trait_exists($class));
}
if ($absent) {
    $answer['job_classes'] = [];
    foreach (lw_app_classes($app->path()) as $candidate) {
        try {
            if (class_exists($candidate) && lw_is_job($candidate)) {
                $answer['job_classes'][] = $candidate;
            }
        } catch (Throwable $e) {
            // a file under app/ that does not load is no job class
        }
    }
}

fwrite($stderr, (string) ob_get_clean());
$json = json_encode($answer, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_INVALID_UTF8_SUBSTITUTE);
if ($json === false) {
    fwrite($stderr, 'laraworker: the answer has no JSON form: '.json_last_error_msg()."\n");
    exit(1);
}
echo $json, "\n";
