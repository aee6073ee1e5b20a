<?php

// laraworker's PHP scripts boot a Laravel app exactly as its own `artisan`
// does: they run the statements artisan runs before it requires
// bootstrap/app.php (the autoloader it chose: vendor/autoload.php in a
// Composer app, bootstrap/autoload.php or anything else in an app that
// loads its framework another way), then that require itself. Guessing the
// autoloader instead booted such apps differently from artisan (a
// vendor/autoload.php left by `composer require` of a single package does
// not load a framework installed outside Composer).
//
// laraworker_artisan_boot($appDir) returns that code, with __DIR__ and
// __FILE__ standing for artisan's own; the script evaluates it at its top
// level (artisan's statements run in the global scope, as in artisan) and
// gets the application object back:
//
//     $app = eval(laraworker_artisan_boot($appDir));
//
// Only the code before the require of bootstrap/app.php is taken, never
// what artisan does with the app afterwards (handling the command line).
// It throws a RuntimeException naming what it cannot follow: no artisan,
// no require of bootstrap/app.php, or one inside a block (an `if`).

function laraworker_artisan_boot(string $appDir): string
{
    $artisan = $appDir.'/artisan';
    $source = is_file($artisan) ? file_get_contents($artisan) : false;
    if ($source === false) {
        throw new RuntimeException("no artisan in {$appDir}");
    }
    $tokens = token_get_all($source);
    $dir = dirname(realpath($artisan) ?: $artisan);
    $code = '';
    $statement = ''; // the current statement, from its start
    $depth = 0;      // braces
    $open = false;   // past the opening tag
    for ($i = 0, $n = count($tokens); $i < $n; $i++) {
        $t = $tokens[$i];
        $id = is_array($t) ? $t[0] : null;
        $text = is_array($t) ? $t[1] : $t;
        if (! $open) {
            // The shebang line and anything before `<?php` is not code.
            $open = $id === T_OPEN_TAG;
            continue;
        }
        if ($id === T_CLOSE_TAG || $id === T_INLINE_HTML) {
            throw new RuntimeException("{$artisan} leaves PHP before it requires bootstrap/app.php; laraworker cannot boot the app as it does");
        }
        if (in_array($id, [T_REQUIRE, T_REQUIRE_ONCE, T_INCLUDE, T_INCLUDE_ONCE], true)) {
            [$expression, $end, $path] = laraworker_include_expression($tokens, $i, $dir, $artisan);
            if ($path !== null && ! is_file($path) && in_array($id, [T_REQUIRE, T_REQUIRE_ONCE], true)) {
                $hint = basename($path) === 'autoload.php' && basename(dirname($path)) === 'vendor' ? ' (run composer install)' : '';
                throw new RuntimeException("{$artisan} requires {$path}, which does not exist{$hint}");
            }
            if (strpos($expression, 'bootstrap/app.php') !== false) {
                if ($depth !== 0) {
                    throw new RuntimeException("{$artisan} requires bootstrap/app.php inside a block; laraworker cannot boot the app as it does");
                }
                return $code."\nreturn ".$text.' '.$expression.';';
            }
            $statement .= $text.' '.$expression;
            $i = $end;
            continue;
        }
        if ($id === T_DIR) {
            $text = var_export($dir, true);
        } elseif ($id === T_FILE) {
            $text = var_export($dir.'/'.basename($artisan), true);
        }
        $statement .= $text;
        if ($text === '{' || $id === T_CURLY_OPEN || $id === T_DOLLAR_OPEN_CURLY_BRACES) {
            $depth++;
        } elseif ($text === '}') {
            $depth--;
        }
        if ($text === ';' || $text === '{' || $text === '}') {
            $code .= $statement;
            $statement = '';
        }
    }
    throw new RuntimeException("{$artisan} never requires bootstrap/app.php; laraworker boots an app the way its artisan does and cannot follow this one");
}

/**
 * The expression of the require/include at $tokens[$at], up to the `;` or
 * `)` that ends it, with __DIR__ and __FILE__ replaced; the index of its
 * last token; and the path it names when it is made of string literals,
 * __DIR__ and `.` alone (else null).
 */
function laraworker_include_expression(array $tokens, int $at, string $dir, string $artisan): array
{
    $expression = '';
    $parens = 0;
    $static = true;
    for ($i = $at + 1, $n = count($tokens); $i < $n; $i++) {
        $t = $tokens[$i];
        $id = is_array($t) ? $t[0] : null;
        $text = is_array($t) ? $t[1] : $t;
        if (($text === ';' || $text === ')' || $text === ',') && $parens === 0 || $id === T_CLOSE_TAG) {
            // Literals only: evaluating it runs nothing of the app's.
            $path = $static ? eval('return '.$expression.';') : null;
            return [$expression, $i - 1, is_string($path) ? $path : null];
        }
        $static = $static && (in_array($id, [T_CONSTANT_ENCAPSED_STRING, T_DIR, T_FILE, T_WHITESPACE], true) || in_array($text, ['.', '(', ')'], true));
        if ($text === '(') {
            $parens++;
        } elseif ($text === ')') {
            $parens--;
        }
        if ($id === T_DIR) {
            $text = var_export($dir, true);
        } elseif ($id === T_FILE) {
            $text = var_export($dir.'/'.basename($artisan), true);
        }
        $expression .= $text;
    }
    throw new RuntimeException("{$artisan}: a require without its end");
}
