<?php

/*
 * Writes testdata/payloads/*: raw jobs.payload bytes produced by this app on
 * Laravel 8.83 (real dispatches, real `queue:work` runs on a temporary SQLite
 * database), hand-written payloads in the Laravel 7/12/13 shapes, and
 * manifest.json describing what a Go test should find in each file.
 *
 * Run through gen-fixtures.sh, which copies the app to a fixed path first so the
 * file paths inside stack traces are the same on every machine.
 *
 * Every expectation written to the manifest is checked here against PHP's own
 * reading of the fixture (json_decode, unserialize, Encrypter::decrypt), so a
 * manifest that disagrees with PHP cannot be generated.
 *
 * Usage: php gen-fixtures.php <app dir (the copy)> <output dir>
 */

declare(strict_types=1);

const KEY32 = 'laraworker fixture key, 32 bytes';
const KEY16 = 'laraworker key16';
const MAX_ATTEMPTS_SUFFIX = ' has been attempted too many times or run too long. The job may have previously timed out.';

if ($argc !== 3) {
    fwrite(STDERR, "usage: php gen-fixtures.php <app dir> <output dir>\n");
    exit(2);
}

$appDir = realpath($argv[1]) ?: fail("no app dir {$argv[1]}");
$outDir = $argv[2];
is_dir($outDir) || mkdir($outDir, 0777, true) || fail("cannot create $outDir");
$outDir = realpath($outDir);

require $appDir.'/bootstrap/autoload.php';

$gen = new FixtureGenerator($appDir, $outDir);
$gen->run();

function fail(string $msg): never
{
    fwrite(STDERR, "gen-fixtures: $msg\n");
    exit(1);
}

function keyString(string $rawKey): string
{
    return 'base64:'.base64_encode($rawKey);
}

/**
 * Turns an unserialized PHP value (objects as __PHP_Incomplete_Class) into the
 * manifest's JSON notation, documented in testdata/payloads/README.md.
 */
function toExpect(mixed $v): mixed
{
    if ($v === null || is_bool($v) || is_int($v) || is_float($v) || is_string($v)) {
        return $v;
    }
    if ($v instanceof UnitEnum) {
        return ['$enum' => get_class($v).'::'.$v->name];
    }
    if (is_array($v)) {
        if (array_is_list($v)) {
            return array_map('toExpect', $v);
        }
        $out = new stdClass;
        foreach ($v as $k => $item) {
            $out->{(string) $k} = toExpect($item);
        }

        return $out;
    }
    if (is_object($v)) {
        [$class, $props] = objectProps($v);
        $out = ['$class' => $class];
        foreach ($props as $name => [$visibility, $value]) {
            $out[$name] = toExpect($value);
        }

        return $out;
    }
    fail('unexpected value type '.gettype($v));
}

/**
 * @return array{0: string, 1: array<string, array{0: string, 1: mixed}>} class and
 *         name => [visibility, value], names unmangled
 */
function objectProps(object $o): array
{
    $raw = (array) $o;
    $class = $raw['__PHP_Incomplete_Class_Name'] ?? get_class($o);
    unset($raw['__PHP_Incomplete_Class_Name']);
    $props = [];
    foreach ($raw as $name => $value) {
        $name = (string) $name;
        $visibility = 'public';
        if (str_starts_with($name, "\0*\0")) {
            $visibility = 'protected';
            $name = substr($name, 3);
        } elseif (str_starts_with($name, "\0")) {
            $visibility = 'private';
            $name = substr($name, strpos($name, "\0", 1) + 1);
        }
        $props[$name] = [$visibility, $value];
    }

    return [$class, $props];
}

function canonical(mixed $v): string
{
    return json_encode($v, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION);
}

/** PHP serialize() of a string, for hand-building commands with correct lengths. */
function ser(string $s): string
{
    return serialize($s);
}

/** O:...:{...} from an ordered list of already-serialized name => value pairs. */
function serObject(string $class, array $props): string
{
    $body = '';
    foreach ($props as $name => $serializedValue) {
        $body .= ser((string) $name).$serializedValue;
    }

    return 'O:'.strlen($class).':"'.$class.'":'.count($props).':{'.$body.'}';
}

final class FixtureGenerator
{
    private string $db;

    private PDO $pdo;

    /** @var list<array<string, mixed>> */
    private array $manifest = [];

    private array $baseEnv;

    public function __construct(private string $appDir, private string $outDir)
    {
        $this->db = dirname($appDir).'/fixtures.sqlite';
        $this->baseEnv = [
            'PATH' => getenv('PATH') ?: '/usr/bin:/bin',
            'APP_ENV' => 'fixtures',
            'APP_KEY' => keyString(KEY32),
            'APP_CIPHER' => 'AES-256-CBC',
            'DB_CONNECTION' => 'sqlite',
            'DB_DATABASE' => $this->db,
            'QUEUE_CONNECTION' => 'database',
            'CACHE_DRIVER' => 'database',
            'LOG_CHANNEL' => 'single',
            'WORKER_NAME' => 'php-fixtures',
        ];
    }

    public function run(): void
    {
        foreach (glob($this->outDir.'/*') as $old) {
            if (basename($old) !== 'README.md') {
                unlink($old);
            }
        }
        $this->freshDatabase();

        $this->objectFixtures();
        $this->encryptedFixtures();
        $this->stringFixtures();
        $this->chainFixtures('chain');
        $this->chainFixtures('chain-catch');
        $this->batchFixtures('batch', 2, null, false);
        $this->batchFixtures('batch-callbacks', 3, 'podcast-batch', true);
        $this->failedFixtures();
        $this->handWrittenFixtures();

        $manifest = [
            'generatedBy' => 'testdata/laravel/gen-fixtures.sh',
            'laravel' => \Illuminate\Foundation\Application::VERSION,
            'php' => PHP_VERSION,
            'appKey' => keyString(KEY32),
            'appKeyRaw' => KEY32,
            'keys' => [
                'AES-256-CBC' => keyString(KEY32),
                'AES-128-CBC' => keyString(KEY16),
                'AES-256-GCM' => keyString(KEY32),
                'AES-128-GCM' => keyString(KEY16),
            ],
            'fixtures' => $this->manifest,
        ];
        file_put_contents($this->outDir.'/manifest.json', json_encode(
            $manifest,
            JSON_PRETTY_PRINT | JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION
        )."\n");
        fwrite(STDOUT, count($this->manifest)." fixtures written to {$this->outDir}\n");
    }

    // ---- the app and its database -------------------------------------------

    private function artisan(array $args, array $env = [], bool $mayFail = false): string
    {
        $cmd = array_merge([PHP_BINARY, 'artisan'], $args);
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $this->appDir, array_merge($this->baseEnv, $env));
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        $code = proc_close($proc);
        if ($code !== 0 && ! $mayFail) {
            fail('php artisan '.implode(' ', $args)." exited $code:\n$out$err");
        }

        return $out.$err;
    }

    private function freshDatabase(): void
    {
        @unlink($this->db);
        touch($this->db);
        $this->artisan(['migrate', '--force']);
        $this->pdo = new PDO('sqlite:'.$this->db, null, null, [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
    }

    private function clearTables(): void
    {
        foreach (['jobs', 'failed_jobs', 'job_batches', 'job_runs', 'cache'] as $table) {
            $this->pdo->exec("DELETE FROM $table");
        }
    }

    /** @return list<array<string, mixed>> */
    private function rows(string $table, string $order = 'id'): array
    {
        return $this->pdo->query("SELECT * FROM $table ORDER BY $order")->fetchAll(PDO::FETCH_ASSOC);
    }

    private function dispatch(string $kind, array $env = []): array
    {
        $this->clearTables();
        $this->artisan(['app:dispatch', $kind], $env);

        return $this->rows('jobs');
    }

    private function write(string $file, string $bytes): void
    {
        file_put_contents($this->outDir.'/'.$file, $bytes);
    }

    // ---- checks ---------------------------------------------------------------

    private const KEYS_8_OBJECT = ['uuid', 'displayName', 'job', 'maxTries', 'maxExceptions', 'failOnTimeout', 'backoff', 'timeout', 'retryUntil', 'data'];

    private const KEYS_8_STRING = ['uuid', 'displayName', 'job', 'maxTries', 'maxExceptions', 'failOnTimeout', 'backoff', 'timeout', 'data'];

    private const OPTIONS_NONE = ['maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => null, 'timeout' => null, 'retryUntil' => null];

    /**
     * Decodes $raw the way a worker does and checks it against $entry; returns
     * the command's properties as name => [visibility, value].
     */
    private function check(string $file, string $raw, array $entry, ?string $plainCommand = null): array
    {
        $p = json_decode($raw, true, 512, JSON_THROW_ON_ERROR);
        if (isset($entry['keys']) && array_keys($p) !== $entry['keys']) {
            fail("$file: keys ".canonical(array_keys($p)).' != '.canonical($entry['keys']));
        }
        foreach (['displayName', 'job'] as $k) {
            if (isset($entry[$k]) && $p[$k] !== $entry[$k]) {
                fail("$file: $k ".canonical($p[$k]).' != '.canonical($entry[$k]));
            }
        }
        foreach ($entry['payload'] ?? [] as $k => $want) {
            if (! array_key_exists($k, $p) || canonical($p[$k]) !== canonical($want)) {
                fail("$file: payload.$k ".canonical($p[$k] ?? '<missing>').' != '.canonical($want));
            }
        }
        if (! isset($entry['commandName'])) {
            if (array_key_exists('data', $entry) && canonical($p['data']) !== canonical($entry['data'])) {
                fail("$file: data ".canonical($p['data']).' != '.canonical($entry['data']));
            }

            return [];
        }
        if ($p['data']['commandName'] !== $entry['commandName']) {
            fail("$file: commandName {$p['data']['commandName']}");
        }
        $command = $plainCommand ?? $p['data']['command'];
        if (! str_starts_with($command, 'O:')) {
            fail("$file: command is not a plain O: string");
        }
        $obj = unserialize($command, ['allowed_classes' => false]);
        if (! is_object($obj)) {
            fail("$file: command does not unserialize");
        }
        [$class, $props] = objectProps($obj);
        if ($class !== $entry['commandName']) {
            fail("$file: command class $class");
        }
        foreach ($entry['properties'] ?? [] as $name => $want) {
            if (! array_key_exists($name, $props)) {
                fail("$file: property $name missing");
            }
            $got = canonical(toExpect($props[$name][1]));
            if ($got !== canonical($want)) {
                fail("$file: property $name = $got, manifest says ".canonical($want));
            }
        }
        foreach ($entry['visibility'] ?? [] as $name => $want) {
            if (($props[$name][0] ?? null) !== $want) {
                fail("$file: $name is not $want");
            }
        }

        return $props;
    }

    private function add(array $entry, string $raw, ?string $plainCommand = null): array
    {
        $props = $this->check($entry['file'], $raw, $entry, $plainCommand);
        $this->write($entry['file'], $raw);
        $this->manifest[] = $entry;

        return $props;
    }

    // ---- fixtures from the real app ------------------------------------------

    private function objectFixtures(): void
    {
        $queueable = fn (array $over = []) => array_merge([
            'connection' => null, 'queue' => null, 'chainConnection' => null, 'chainQueue' => null,
            'chainCatchCallbacks' => null, 'delay' => null, 'afterCommit' => null, 'middleware' => [], 'chained' => [],
        ], $over);

        $cases = [
            'noop' => ['App\Jobs\NoopJob', self::OPTIONS_NONE, $queueable(['job' => null]), [], 'Does nothing. Shows the 8.x Queueable property set (8.x serializes default-valued properties too).'],
            'scalars' => ['App\Jobs\ScalarsJob', self::OPTIONS_NONE, [
                'podcastId' => 42, 'negative' => -7, 'ratio' => 0.1, 'huge' => 1.0e25,
                'title' => 'Héllo / wörld "quoted" ✓', 'flag' => true, 'nothing' => null,
                'tags' => ['news', 'tech'],
                'meta' => ['nested' => ['x' => 1, 'y' => [1.25, 'z']], 'empty' => [], '7' => 'int-key'],
            ], [], 'huge serializes as d:1.0E+25; meta has an int key 7 (i:7;); title holds raw UTF-8 and an escaped slash in the JSON.'],
            'options' => ['App\Jobs\OptionsJob', [
                'maxTries' => 5, 'maxExceptions' => 3, 'failOnTimeout' => true, 'backoff' => '1,5,10', 'timeout' => 30, 'retryUntil' => 4102444800,
            ], ['podcastId' => 42, 'tries' => 5, 'maxExceptions' => 3, 'backoff' => [1, 5, 10], 'timeout' => 30, 'failOnTimeout' => true, 'retryUntil' => 4102444800], [], 'All options as properties; backoff array joined with commas.'],
            'retry-until' => ['App\Jobs\RetryUntilJob', ['maxTries' => 3, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => null, 'timeout' => null],
                ['tries' => 3, 'minutes' => 10], [], 'retryUntil() method: payload.retryUntil = dispatch time + 600 s (varies).'],
            'max-exceptions' => ['App\Jobs\MaxExceptionsJob', ['maxTries' => 10, 'maxExceptions' => 2, 'failOnTimeout' => false, 'backoff' => '0', 'timeout' => null, 'retryUntil' => null],
                ['tries' => 10, 'maxExceptions' => 2, 'backoff' => 0], [], 'Always throws; fails on the 2nd exception via the cache counter.'],
            'throws' => ['App\Jobs\FailingJob', self::OPTIONS_NONE, ['podcastId' => 42, 'note' => 'café ✗'], [], 'Throws RuntimeException on every run.'],
            'models' => ['App\Jobs\ModelsJob', self::OPTIONS_NONE, [
                'podcast' => ['$class' => 'Illuminate\Contracts\Database\ModelIdentifier', 'class' => 'App\Models\Podcast', 'id' => 42, 'relations' => [], 'connection' => 'sqlite'],
                'users' => ['$class' => 'Illuminate\Contracts\Database\ModelIdentifier', 'class' => 'App\Models\User', 'id' => [1, 2], 'relations' => [], 'connection' => 'sqlite'],
            ], [], 'SerializesModels: ModelIdentifier without collectionClass (added in 9.26).'],
            'enums-dates' => ['App\Jobs\EnumsDatesJob', self::OPTIONS_NONE, [
                'status' => ['$enum' => 'App\Enums\Status::Archived'],
                'priority' => ['$enum' => 'App\Enums\Priority::High'],
                'suit' => ['$enum' => 'App\Enums\Suit::Spades'],
                'carbon' => ['$class' => 'Carbon\Carbon', 'date' => '2024-02-29 13:14:15.123456', 'timezone_type' => 3, 'timezone' => 'UTC'],
                'carbonImmutable' => ['$class' => 'Carbon\CarbonImmutable', 'date' => '2024-07-01 08:00:00.000000', 'timezone_type' => 3, 'timezone' => 'Europe/Amsterdam'],
                'dateTime' => ['$class' => 'DateTimeImmutable', 'date' => '2001-02-03 04:05:06.000000', 'timezone_type' => 1, 'timezone' => '+02:00'],
            ], [], 'E: enums (string-backed, int-backed, pure) and date objects.'],
            'delayed' => ['App\Jobs\DelayedJob', self::OPTIONS_NONE, ['podcastId' => 42, 'queue' => 'high', 'delay' => 10], [], 'Dispatched with ->onQueue("high")->delay(10): available_at = created_at + 10.'],
            'private-props' => ['App\Jobs\PrivatePropsJob', self::OPTIONS_NONE, [
                'secret' => 'private value', 'level' => 3, 'options' => ['mode' => 'strict'], 'visible' => 'public value',
            ], ['secret' => 'private', 'level' => 'protected', 'options' => 'protected', 'visible' => 'public'], 'NUL-mangled private/protected names.'],
            'sleep' => ['App\Jobs\SleepJob', ['maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => true, 'backoff' => null, 'timeout' => 2, 'retryUntil' => null],
                ['seconds' => 5, 'timeout' => 2, 'failOnTimeout' => true], [], 'Sleeps past its own 2 s timeout; failOnTimeout.'],
            'closure' => ['Illuminate\Queue\CallQueuedClosure', self::OPTIONS_NONE, [
                'failureCallbacks' => [], 'deleteWhenMissingModels' => true, 'batchId' => null,
            ], [], 'dispatch(function () use ($podcastId) {...}): a signed Laravel\SerializableClosure; displayName is "Closure (<file>:<line>)".'],
        ];

        foreach ($cases as $kind => [$class, $options, $properties, $visibility, $note]) {
            $rows = $this->dispatch($kind);
            count($rows) === 1 || fail("$kind: expected 1 jobs row, got ".count($rows));
            $row = $rows[0];
            $isClosure = $kind === 'closure';
            $entry = [
                'file' => "$kind.json",
                'kind' => $kind,
                'source' => 'laravel-8.83.26',
                'queue' => $row['queue'],
                'delaySeconds' => (int) $row['available_at'] - (int) $row['created_at'],
                'displayName' => $isClosure ? json_decode($row['payload'], true)['displayName'] : $class,
                'job' => 'Illuminate\Queue\CallQueuedHandler@call',
                'commandName' => $class,
                'keys' => self::KEYS_8_OBJECT,
                'payload' => $options,
                'properties' => $properties,
            ];
            if ($visibility) {
                $entry['visibility'] = $visibility;
            }
            if ($kind === 'retry-until') {
                // retryUntil() = now + 10 minutes at dispatch; jobs.created_at is the same clock.
                $after = json_decode($row['payload'], true)['retryUntil'] - (int) $row['created_at'];
                $after === 600 || $after === 601 || fail("retry-until: retryUntil is created_at + $after");
                $entry['retryUntilAfterCreatedAt'] = 600;
            }
            $entry['note'] = $note;
            if ($isClosure && ! preg_match('/^Closure \(Kinds\.php:\d+\)$/', $entry['displayName'])) {
                fail('closure displayName '.$entry['displayName']);
            }
            $this->add($entry, $row['payload']);
        }
        $this->expectQueueAndDelay('delayed.json', 'high', 10);
    }

    private function expectQueueAndDelay(string $file, string $queue, int $delay): void
    {
        foreach ($this->manifest as $e) {
            if ($e['file'] === $file && ($e['queue'] !== $queue || $e['delaySeconds'] !== $delay)) {
                fail("$file: queue/delay {$e['queue']}/{$e['delaySeconds']}");
            }
        }
    }

    private function encryptedFixtures(): void
    {
        $ciphers = ['AES-256-CBC' => KEY32, 'AES-128-CBC' => KEY16, 'AES-256-GCM' => KEY32, 'AES-128-GCM' => KEY16];
        foreach ($ciphers as $cipher => $rawKey) {
            $key = keyString($rawKey);
            $rows = $this->dispatch('encrypted', ['APP_KEY' => $key, 'APP_CIPHER' => $cipher]);
            $raw = $rows[0]['payload'];
            $encrypted = json_decode($raw, true)['data']['command'];
            $encrypter = new \Illuminate\Encryption\Encrypter($rawKey, $cipher);
            // The plaintext is serialize(serialize($job)): decrypt() undoes the outer one.
            $inner = $encrypter->decrypt($encrypted);
            is_string($inner) && str_starts_with($inner, 'O:') || fail("$cipher: decrypted command is not an O: string");
            $env = json_decode(base64_decode($encrypted), true);
            $isGcm = str_ends_with($cipher, 'GCM');
            if (array_keys($env) !== ['iv', 'value', 'mac', 'tag'] || ($isGcm ? $env['mac'] !== '' : $env['tag'] !== '')) {
                fail("$cipher: unexpected envelope ".implode(',', array_keys($env)));
            }
            $file = 'encrypted-'.strtolower($cipher).'.json';
            $this->add([
                'file' => $file,
                'kind' => 'encrypted',
                'source' => 'laravel-8.83.26',
                'queue' => 'default',
                'delaySeconds' => 0,
                'displayName' => 'App\Jobs\EncryptedJob',
                'job' => 'Illuminate\Queue\CallQueuedHandler@call',
                'commandName' => 'App\Jobs\EncryptedJob',
                'keys' => self::KEYS_8_OBJECT,
                'payload' => self::OPTIONS_NONE,
                'properties' => ['secret' => 'top secret ✓', 'podcastId' => 42],
                'encryption' => ['cipher' => $cipher, 'key' => $key, 'ivBytes' => $isGcm ? 12 : 16],
                'note' => "ShouldBeEncrypted. data.command = base64(JSON{iv,value,mac,tag}); decrypting gives s:N:\"O:...\"; (serialized twice). The decrypted inner command is in ".substr($file, 0, -5).'.command.txt.',
            ], $raw, $inner);
            $this->write(substr($file, 0, -5).'.command.txt', $inner);
        }
    }

    private function stringFixtures(): void
    {
        $cases = [
            'string' => ['podcastId' => 42, 'tags' => ['a', 'b'], 'title' => 'Ünïcode / slash'],
            'string-nodata' => '',
        ];
        foreach ($cases as $kind => $data) {
            $rows = $this->dispatch($kind);
            $this->add([
                'file' => "$kind.json",
                'kind' => $kind,
                'source' => 'laravel-8.83.26',
                'queue' => $rows[0]['queue'],
                'delaySeconds' => 0,
                'displayName' => 'App\Handlers\StringJobHandler',
                'job' => 'App\Handlers\StringJobHandler@handle',
                'keys' => self::KEYS_8_STRING,
                'payload' => ['maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => null, 'timeout' => null],
                'data' => $data,
                'note' => "Queue::push('App\\Handlers\\StringJobHandler@handle', ...): no retryUntil key, data verbatim (default \"\").",
            ], $rows[0]['payload']);
        }
    }

    /**
     * The first link as dispatched, then the row PHP's dispatchNextJobInChain()
     * pushes when a real worker has run that first link.
     */
    private function chainFixtures(string $kind): void
    {
        $rows = $this->dispatch($kind);
        count($rows) === 1 || fail("$kind: expected one row");
        $first = $rows[0];
        $firstPayload = json_decode($first['payload'], true);
        $firstCommand = $firstPayload['data']['command'];

        $this->artisan(['queue:work', '--once', '--queue=chains']);
        $after = $this->rows('jobs');
        count($after) === 1 && $after[0]['id'] !== $first['id'] || fail("$kind: worker did not push exactly one next link");
        $next = $after[0];
        $nextPayload = json_decode($next['payload'], true);
        $nextCommand = $nextPayload['data']['command'];
        $runs = $this->rows('job_runs');
        count($runs) === 1 && json_decode($runs[0]['result'], true)['step'] === 1 || fail("$kind: first link did not run");

        // What a non-PHP worker must reproduce byte for byte.
        $firstObj = unserialize($firstCommand, ['allowed_classes' => false]);
        [, $firstProps] = objectProps($firstObj);
        $chained = $firstProps['chained'][1];
        $expectedNext = $this->nextLinkCommand($firstCommand);
        $catch = $kind === 'chain-catch';
        if (! $catch) {
            $expectedNext === $nextCommand || fail("$kind: re-encoding chained[0] does not give the worker's command");
        } else {
            // PHP re-serializes the catch closure, which embeds spl_object_hash() and a fresh
            // signature: not reproducible. Everything else must match, and the copy that
            // keeps the original closure bytes must still run on a real PHP worker.
            $expectedNext !== $nextCommand || fail("$kind: closures unexpectedly byte-identical");
            $this->sameExceptClosures($kind, $expectedNext, $nextCommand);
        }
        $this->runReencodedNextLink($kind, $next, $expectedNext);

        $common = [
            'source' => 'laravel-8.83.26',
            'queue' => 'chains',
            'delaySeconds' => 0,
            'displayName' => 'App\Jobs\ChainLinkJob',
            'job' => 'Illuminate\Queue\CallQueuedHandler@call',
            'commandName' => 'App\Jobs\ChainLinkJob',
            'keys' => self::KEYS_8_OBJECT,
            'payload' => self::OPTIONS_NONE,
        ];
        $this->add([
            'file' => "$kind.json",
            'kind' => $kind,
        ] + $common + [
            'properties' => [
                'step' => 1, 'label' => 'first', 'connection' => 'database', 'queue' => 'chains',
                'chainConnection' => 'database', 'chainQueue' => 'chains', 'chained' => $chained,
            ],
            'commandFile' => "$kind.command.txt",
            'nextFile' => "$kind-next.json",
            'note' => 'Bus::chain([...3 links])->onConnection("database")->onQueue("chains")'.($catch ? '->catch(fn)' : '')
                .'. chained holds the links 2 and 3 as serialized strings; links inside chained have connection/queue/chain* null.',
        ], $first['payload']);
        $this->add([
            'file' => "$kind-next.json",
            'kind' => "$kind-next",
        ] + $common + [
            'properties' => [
                'step' => 2, 'label' => 'second', 'connection' => 'database', 'queue' => 'chains',
                'chainConnection' => 'database', 'chainQueue' => 'chains', 'chained' => [$chained[1]],
            ],
            'commandFile' => "$kind-next.command.txt",
            'note' => 'Pushed by a real `queue:work --once` after the first link of '.$kind.'.json ran: '
                .'unserialize(chained[0]); chained = rest; connection = own ?: chainConnection; queue = own ?: chainQueue; '
                .'chainConnection, chainQueue, chainCatchCallbacks copied from the finished link; serialize(). '
                .($catch
                    ? 'Byte-identical to that re-encoding ('.$kind.'-next.reencoded.command.txt) except inside chainCatchCallbacks: PHP re-serializes the closure with a new spl_object_hash "self" and a new signature. The re-encoding that keeps the original closure bytes was pushed in its place and run by a real worker (link 2 ran, link 3 was pushed).'
                    : 'Its data.command (also '.$kind.'-next.command.txt) is byte-identical to that re-encoding ('.$kind.'-next.reencoded.command.txt), which a real worker then ran. uuid differs.'),
        ], $next['payload']);
        $this->write("$kind.command.txt", $firstCommand);
        $this->write("$kind-next.command.txt", $nextCommand);
        $this->write("$kind-next.reencoded.command.txt", $expectedNext);
    }

    private function sameExceptClosures(string $kind, string $a, string $b): void
    {
        [, $pa] = objectProps(unserialize($a, ['allowed_classes' => false]));
        [, $pb] = objectProps(unserialize($b, ['allowed_classes' => false]));
        $ca = $pa['chainCatchCallbacks'][1];
        $cb = $pb['chainCatchCallbacks'][1];
        unset($pa['chainCatchCallbacks'], $pb['chainCatchCallbacks']);
        canonical(toExpect(array_map(fn ($p) => $p[1], $pa))) === canonical(toExpect(array_map(fn ($p) => $p[1], $pb)))
            || fail("$kind: next link differs outside chainCatchCallbacks");
        count($ca) === 1 && count($cb) === 1 || fail("$kind: catch callbacks count");
        $code = function ($closure) {
            $signed = (array) ((array) $closure)['serializable'];
            $native = (array) unserialize($signed['serializable'], ['allowed_classes' => false]);

            return $native['function'];
        };
        $code($ca[0]) === $code($cb[0]) || fail("$kind: catch closure code differs");
    }

    /**
     * Puts the re-encoded next link (what a non-PHP worker would push) in place of the
     * worker's own and lets a real worker run it: it must run link 2 and push link 3.
     */
    private function runReencodedNextLink(string $kind, array $nextRow, string $command): void
    {
        $payload = json_decode($nextRow['payload'], true);
        $payload['data']['command'] = $command;
        $update = $this->pdo->prepare('UPDATE jobs SET payload = ? WHERE id = ?');
        $update->execute([json_encode($payload, JSON_UNESCAPED_UNICODE), $nextRow['id']]);
        $this->artisan(['queue:work', '--once', '--queue=chains']);
        $runs = $this->rows('job_runs');
        count($runs) === 2 && json_decode($runs[1]['result'], true)['step'] === 2 || fail("$kind: re-encoded link 2 did not run");
        $left = $this->rows('jobs');
        count($left) === 1 && str_contains($left[0]['payload'], 's:5:\\"third\\"') || fail("$kind: link 3 was not pushed");
    }

    /** dispatchNextJobInChain() as PHP does it, on incomplete-class objects. */
    private function nextLinkCommand(string $firstCommand): string
    {
        $current = unserialize($firstCommand, ['allowed_classes' => false]);
        $c = (array) $current;
        $chained = $c['chained'];
        $next = unserialize(array_shift($chained), ['allowed_classes' => false]);
        $n = (array) $next;
        $n['chained'] = $chained;
        $n['connection'] = $n['connection'] ?: $c['chainConnection'];
        $n['queue'] = $n['queue'] ?: $c['chainQueue'];
        $n['chainConnection'] = $c['chainConnection'];
        $n['chainQueue'] = $c['chainQueue'];
        $n['chainCatchCallbacks'] = $c['chainCatchCallbacks'];
        $class = $n['__PHP_Incomplete_Class_Name'];
        unset($n['__PHP_Incomplete_Class_Name']);
        $props = [];
        foreach ($n as $name => $value) {
            $props[$name] = serialize($value);
        }

        return serObject($class, $props);
    }

    private function batchFixtures(string $kind, int $members, ?string $name, bool $callbacks): void
    {
        $rows = $this->dispatch($kind);
        count($rows) === $members || fail("$kind: expected $members rows");
        $batches = $this->rows('job_batches');
        count($batches) === 1 || fail("$kind: expected one job_batches row");
        $batch = $batches[0];
        $batch['name'] === ($name ?? '') || fail("$kind: batch name ".$batch['name']);
        (int) $batch['total_jobs'] === $members && (int) $batch['pending_jobs'] === $members || fail("$kind: counts");

        $options = unserialize($batch['options'], ['allowed_classes' => false]);
        $wantKeys = ['then', 'catch', 'finally'];
        foreach ($wantKeys as $k) {
            count($options[$k] ?? []) === ($callbacks ? 1 : 0) || fail("$kind: options[$k]");
        }
        $plainOptions = $callbacks ? ['allowFailures' => true, 'queue' => 'batches'] : [];
        canonical(toExpect(array_diff_key($options, array_flip($wantKeys)))) === canonical(toExpect($plainOptions))
            || fail("$kind: options ".canonical(toExpect($options)));

        $queue = $callbacks ? 'batches' : 'default';
        foreach ($rows as $i => $row) {
            $file = $i === 0 ? "$kind-member.json" : "$kind-member-".($i + 1).'.json';
            $this->add([
                'file' => $file,
                'kind' => "$kind-member",
                'source' => 'laravel-8.83.26',
                'queue' => $queue,
                'delaySeconds' => 0,
                'displayName' => 'App\Jobs\BatchMemberJob',
                'job' => 'Illuminate\Queue\CallQueuedHandler@call',
                'commandName' => 'App\Jobs\BatchMemberJob',
                'keys' => self::KEYS_8_OBJECT,
                'payload' => self::OPTIONS_NONE,
                'properties' => ['n' => $i + 1, 'fail' => false, 'batchId' => $batch['id']],
                'batchFile' => "$kind.job_batches.json",
                'note' => '8.x: the batch id is only inside the command (public $batchId); data.batchId exists from 12.51.',
            ], $row['payload']);
        }

        $this->write("$kind.options.txt", $batch['options']);
        $this->write("$kind.job_batches.json", json_encode($batch, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT));
        $this->manifest[] = [
            'file' => "$kind.job_batches.json",
            'kind' => "$kind-row",
            'source' => 'laravel-8.83.26 (SQLite row as PDO returns it)',
            'batchId' => $batch['id'],
            'name' => $batch['name'],
            'totalJobs' => $members,
            'pendingJobs' => $members,
            'failedJobs' => 0,
            'failedJobIds' => '[]',
            'optionsFile' => "$kind.options.txt",
            'options' => toExpect($plainOptions),
            'callbacks' => $callbacks ? ['then' => 1, 'catch' => 1, 'finally' => 1] : ['then' => 0, 'catch' => 0, 'finally' => 0],
            'note' => 'options raw bytes are in '.$kind.'.options.txt (PHP serialize of the PendingBatch options array, a:0:{} when none; "options" here lists the non-callback keys; '
                .'callbacks are SerializableClosure objects; stored raw on SQLite/MySQL, base64 on PostgreSQL).',
        ];
    }

    /**
     * failed_jobs rows written by a real worker, and what queue:retry pushes back.
     */
    private function failedFixtures(): void
    {
        // 1. A job that throws (default --tries=1).
        $rows = $this->dispatch('throws');
        $dispatched = $rows[0]['payload'];
        $this->artisan(['queue:work', '--once']);
        $this->writeFailed('failed-throws', 'throws', $dispatched, 'RuntimeException', 'Podcast 42 could not be processed ✗', 'App\Jobs\FailingJob');

        // queue:retry re-encodes the payload without JSON_UNESCAPED_UNICODE.
        $this->artisan(['queue:retry', 'all']);
        $retried = $this->rows('jobs');
        count($retried) === 1 || fail('queue:retry pushed '.count($retried).' rows');
        $retriedRaw = $retried[0]['payload'];
        str_contains($retriedRaw, '\u00e9') || fail('retried payload kept raw unicode');
        json_decode($retriedRaw, true) == json_decode($dispatched, true) || fail('retried payload decodes differently');
        ((int) $retried[0]['attempts']) === 0 || fail('retried attempts');
        $this->add([
            'file' => 'throws-retried.json',
            'kind' => 'throws-retried',
            'source' => 'laravel-8.83.26 (php artisan queue:retry all)',
            'queue' => 'default',
            'delaySeconds' => 0,
            'displayName' => 'App\Jobs\FailingJob',
            'job' => 'Illuminate\Queue\CallQueuedHandler@call',
            'commandName' => 'App\Jobs\FailingJob',
            'keys' => self::KEYS_8_OBJECT,
            'payload' => self::OPTIONS_NONE,
            'properties' => ['podcastId' => 42, 'note' => 'café ✗'],
            'sameAs' => 'failed-throws.payload.json',
            'note' => 'The payload queue:retry pushed back for failed-throws: same uuid and values, but json_encode without flags: '
                .'non-ASCII as \uXXXX (inside data.command too). Compare decoded, not bytes.',
        ], $retriedRaw);

        // 2. A job whose previous attempt "died": attempts already at maxTries when reserved.
        $rows = $this->dispatch('noop');
        $dispatched = $rows[0]['payload'];
        $this->pdo->exec('UPDATE jobs SET attempts = 1');
        $this->artisan(['queue:work', '--once']);
        count($this->rows('job_runs')) === 0 || fail('noop ran although it exceeded its attempts');
        $this->writeFailed('failed-max-attempts', 'noop', $dispatched, 'Illuminate\Queue\MaxAttemptsExceededException', 'App\Jobs\NoopJob'.MAX_ATTEMPTS_SUFFIX, 'App\Jobs\NoopJob');

        // 3. A timeout with failOnTimeout: the daemon worker SIGKILLs itself after failing the job.
        $rows = $this->dispatch('sleep');
        $dispatched = $rows[0]['payload'];
        $this->artisan(['queue:work', '--stop-when-empty'], [], true);
        $this->writeFailed('failed-timeout', 'sleep', $dispatched, 'Illuminate\Queue\MaxAttemptsExceededException', 'App\Jobs\SleepJob'.MAX_ATTEMPTS_SUFFIX, 'App\Jobs\SleepJob');
        count($this->rows('jobs')) === 0 || fail('timed-out job still in jobs');

        // 4. maxExceptions reached: the stored exception is the job's own.
        $rows = $this->dispatch('max-exceptions');
        $dispatched = $rows[0]['payload'];
        $this->artisan(['queue:work', '--stop-when-empty']);
        count($this->rows('job_runs')) === 2 || fail('max-exceptions did not run exactly twice');
        $this->writeFailed('failed-max-exceptions', 'max-exceptions', $dispatched, 'RuntimeException', 'MaxExceptionsJob always throws', 'App\Jobs\MaxExceptionsJob');
    }

    private function writeFailed(string $name, string $kind, string $dispatched, string $exClass, string $exMessage, string $displayName): void
    {
        $failed = $this->rows('failed_jobs');
        count($failed) === 1 || fail("$name: expected one failed_jobs row, got ".count($failed));
        $row = $failed[0];
        $row['payload'] === $dispatched || fail("$name: failed_jobs.payload differs from jobs.payload");
        $row['uuid'] === json_decode($dispatched, true)['uuid'] || fail("$name: uuid");
        $row['connection'] === 'database' && $row['queue'] === 'default' || fail("$name: connection/queue");
        $head = "$exClass: $exMessage in ";
        str_starts_with($row['exception'], $head) || fail("$name: exception starts ".substr($row['exception'], 0, 200));
        str_contains($row['exception'], "\nStack trace:\n#0 ") && str_ends_with($row['exception'], '{main}') || fail("$name: trace shape");
        preg_match('/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/', $row['failed_at']) || fail("$name: failed_at {$row['failed_at']}");

        $this->write("$name.json", json_encode($row, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT));
        $this->write("$name.exception.txt", $row['exception']);
        $this->write("$name.payload.json", $row['payload']);
        $this->manifest[] = [
            'file' => "$name.json",
            'kind' => "failed-$kind",
            'source' => 'laravel-8.83.26 (failed_jobs row written by queue:work, database-uuids driver; SQLite row as PDO returns it)',
            'uuid' => $row['uuid'],
            'connection' => 'database',
            'queue' => 'default',
            'displayName' => $displayName,
            'payloadFile' => "$name.payload.json",
            'exceptionFile' => "$name.exception.txt",
            'exceptionClass' => $exClass,
            'exceptionMessage' => $exMessage,
            'exceptionPrefix' => $head,
            'note' => 'payload is byte-identical to the jobs.payload that was reserved. exception = (string) $e: '
                .'"<class>: <message> in <file>:<line>\nStack trace:\n#0 ...\n#N {main}", no trailing newline. failed_at is "Y-m-d H:i:s" UTC.',
        ];
    }

    // ---- hand-written payloads for newer/older Laravel shapes -----------------

    private function handWrittenFixtures(): void
    {
        $podcast = 'App\Jobs\ProcessPodcast';
        $uuid = fn (int $n) => sprintf('00000000-0000-4000-8000-%012d', $n);
        $enc = fn (array $p) => json_encode($p, JSON_UNESCAPED_UNICODE);
        $handler = 'Illuminate\Queue\CallQueuedHandler@call';

        // 9.4+ SerializesModels omits default-valued properties.
        $cmdPlain = serObject($podcast, ['podcastId' => 'i:42;']);
        $cmdDelayed = serObject($podcast, ['podcastId' => 'i:42;', 'queue' => ser('high'), 'delay' => 'i:10;']);
        $batchId = '9a1b2c3d-0000-4000-8000-00000000b001';
        $batchMember = 'App\Jobs\ImportCsv';
        $cmdBatch = serObject($batchMember, ['row' => 'i:7;', 'batchId' => ser($batchId)]);
        $modelId = 'O:45:"Illuminate\Contracts\Database\ModelIdentifier":5:{s:5:"class";s:18:"App\Models\Podcast";s:2:"id";i:7;s:9:"relations";a:0:{}s:10:"connection";s:5:"mysql";s:15:"collectionClass";N;}';
        $cmdModels = serObject('App\Jobs\PublishPodcast', ['podcast' => $modelId]);

        $opts = fn (array $o = []) => array_merge([
            'maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => null, 'timeout' => null, 'retryUntil' => null,
        ], $o);
        $object = function (int $n, string $class, string $cmd, array $o = []) use ($uuid, $handler, $opts) {
            return array_merge(['uuid' => $uuid($n), 'displayName' => $class, 'job' => $handler], $opts($o));
        };

        $fixtures = [];

        // 7.x: delay (= retry backoff) and timeoutAt instead of backoff/retryUntil, no failOnTimeout.
        $cmd7 = serObject($podcast, [
            'podcastId' => 'i:42;', 'job' => 'N;', 'connection' => 'N;', 'queue' => 'N;', 'chainConnection' => 'N;',
            'chainQueue' => 'N;', 'delay' => 'N;', 'middleware' => 'a:0:{}', 'chained' => 'a:0:{}',
        ]);
        $fixtures['l7-object.json'] = [[
            'uuid' => $uuid(7), 'displayName' => $podcast, 'job' => $handler,
            'maxTries' => 3, 'maxExceptions' => null, 'delay' => 5, 'timeout' => 60, 'timeoutAt' => 4102444800,
            'data' => ['commandName' => $podcast, 'command' => $cmd7],
        ], [
            'kind' => 'l7-object', 'displayName' => $podcast, 'commandName' => $podcast,
            'keys' => ['uuid', 'displayName', 'job', 'maxTries', 'maxExceptions', 'delay', 'timeout', 'timeoutAt', 'data'],
            'payload' => ['maxTries' => 3, 'maxExceptions' => null, 'delay' => 5, 'timeout' => 60, 'timeoutAt' => 4102444800],
            'properties' => ['podcastId' => 42],
            'expect' => ['retryBackoff' => '5', 'retryUntil' => 4102444800],
            'note' => 'Laravel 7.x key set (spec 4.2): `delay` is the retry backoff and `timeoutAt` the expiry; 8.x workers read them as fallbacks for backoff/retryUntil.',
        ]];

        // 12.11-12.50: createdAt and delay at the end.
        $fixtures['l12-object.json'] = [
            $object(12, $podcast, $cmdPlain) + ['data' => ['commandName' => $podcast, 'command' => $cmdPlain], 'createdAt' => 1767225600, 'delay' => null],
            ['kind' => 'l12-object', 'displayName' => $podcast, 'commandName' => $podcast,
                'keys' => [...self::KEYS_8_OBJECT, 'createdAt', 'delay'],
                'payload' => $opts() + ['createdAt' => 1767225600, 'delay' => null],
                'properties' => ['podcastId' => 42],
                'note' => 'Laravel 12.11-12.50 (spec 4.2): + createdAt, delay (null: not pushed through later()). 9.4+ command omits default-valued properties.'],
        ];
        $fixtures['l12-delayed.json'] = [
            $object(13, $podcast, $cmdDelayed, ['backoff' => null]) + ['data' => ['commandName' => $podcast, 'command' => $cmdDelayed], 'createdAt' => 1767225600, 'delay' => 10],
            ['kind' => 'l12-delayed', 'displayName' => $podcast, 'commandName' => $podcast,
                'keys' => [...self::KEYS_8_OBJECT, 'createdAt', 'delay'],
                'payload' => $opts() + ['createdAt' => 1767225600, 'delay' => 10],
                'properties' => ['podcastId' => 42, 'queue' => 'high', 'delay' => 10],
                'expect' => ['retryBackoff' => '10'],
                'note' => '->onQueue("high")->delay(10) on 12.11+: payload.delay = 10. With no own backoff, Job::backoff() falls back to payload.delay (spec 5.5).'],
        ];
        $fixtures['l12-batch.json'] = [
            $object(14, $batchMember, $cmdBatch) + ['data' => ['commandName' => $batchMember, 'command' => $cmdBatch, 'batchId' => $batchId], 'createdAt' => 1767225600, 'delay' => null],
            ['kind' => 'l12-batch', 'displayName' => $batchMember, 'commandName' => $batchMember,
                'keys' => [...self::KEYS_8_OBJECT, 'createdAt', 'delay'],
                'payload' => $opts() + ['createdAt' => 1767225600, 'delay' => null],
                'properties' => ['row' => 7, 'batchId' => $batchId],
                'expect' => ['dataBatchId' => $batchId],
                'note' => 'Laravel 12.51+ (spec 4.2): data.batchId after data.command.'],
        ];
        $context = ['data' => ['request_id' => serialize('req-123')], 'hidden' => []];
        $fixtures['l12-context.json'] = [
            $object(15, $podcast, $cmdPlain) + ['data' => ['commandName' => $podcast, 'command' => $cmdPlain, 'batchId' => null], 'createdAt' => 1767225600, 'illuminate:log:context' => $context, 'delay' => null],
            ['kind' => 'l12-context', 'displayName' => $podcast, 'commandName' => $podcast,
                'keys' => [...self::KEYS_8_OBJECT, 'createdAt', 'illuminate:log:context', 'delay'],
                'payload' => $opts() + ['createdAt' => 1767225600, 'delay' => null],
                'properties' => ['podcastId' => 42],
                'note' => 'Laravel 12.51+ with a payload hook key (11+ Context): hook keys land after createdAt and before delay (spec 4.4). hidden is an empty PHP array, so JSON [].'],
        ];
        $fixtures['l12-string.json'] = [
            ['uuid' => $uuid(16), 'displayName' => 'App\Handlers\StringJobHandler', 'job' => 'App\Handlers\StringJobHandler@handle',
                'maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => null, 'timeout' => null,
                'data' => ['podcastId' => 42], 'createdAt' => 1767225600, 'delay' => null],
            ['kind' => 'l12-string', 'displayName' => 'App\Handlers\StringJobHandler', 'job' => 'App\Handlers\StringJobHandler@handle',
                'keys' => [...self::KEYS_8_STRING, 'createdAt', 'delay'],
                'payload' => ['maxTries' => null, 'createdAt' => 1767225600, 'delay' => null],
                'data' => ['podcastId' => 42],
                'note' => 'Laravel 12.11+ string job (spec 4.3): createdAt and always delay; no retryUntil.'],
        ];
        $fixtures['l12-string-later.json'] = [
            ['uuid' => $uuid(17), 'displayName' => 'App\Handlers\StringJobHandler', 'job' => 'App\Handlers\StringJobHandler@handle',
                'maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => null, 'timeout' => null,
                'data' => '', 'createdAt' => 1767225600, 'delay' => 30],
            ['kind' => 'l12-string-later', 'displayName' => 'App\Handlers\StringJobHandler', 'job' => 'App\Handlers\StringJobHandler@handle',
                'keys' => [...self::KEYS_8_STRING, 'createdAt', 'delay'],
                'payload' => ['createdAt' => 1767225600, 'delay' => 30],
                'data' => '',
                'note' => "Queue::later(30, 'App\\Handlers\\StringJobHandler@handle') on 12.11+: delay = 30, default data \"\"."],
        ];
        // 13.x: deleteWhenMissingModels between retryUntil and data; ModelIdentifier has collectionClass (9.26+).
        $fixtures['l13-object.json'] = [
            $object(18, 'App\Jobs\PublishPodcast', $cmdModels, ['maxTries' => 3, 'backoff' => '1,5,10', 'timeout' => 120])
                + ['deleteWhenMissingModels' => true, 'data' => ['commandName' => 'App\Jobs\PublishPodcast', 'command' => $cmdModels, 'batchId' => null], 'createdAt' => 1767225600, 'delay' => null],
            ['kind' => 'l13-object', 'displayName' => 'App\Jobs\PublishPodcast', 'commandName' => 'App\Jobs\PublishPodcast',
                'keys' => ['uuid', 'displayName', 'job', 'maxTries', 'maxExceptions', 'failOnTimeout', 'backoff', 'timeout', 'retryUntil', 'deleteWhenMissingModels', 'data', 'createdAt', 'delay'],
                'payload' => $opts(['maxTries' => 3, 'backoff' => '1,5,10', 'timeout' => 120]) + ['deleteWhenMissingModels' => true, 'createdAt' => 1767225600, 'delay' => null],
                'properties' => ['podcast' => ['$class' => 'Illuminate\Contracts\Database\ModelIdentifier', 'class' => 'App\Models\Podcast', 'id' => 7, 'relations' => [], 'connection' => 'mysql', 'collectionClass' => null]],
                'note' => 'Laravel 13.x (spec 4.2): deleteWhenMissingModels between retryUntil and data; data.batchId null outside batches.'],
        ];
        $fixtures['l13-string.json'] = [
            ['uuid' => $uuid(19), 'displayName' => 'App\Handlers\StringJobHandler', 'job' => 'App\Handlers\StringJobHandler@handle',
                'maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => null, 'timeout' => null,
                'data' => ['ids' => [1, 2, 3], 'note' => 'ünïcode'], 'createdAt' => 1767225600, 'delay' => null],
            ['kind' => 'l13-string', 'displayName' => 'App\Handlers\StringJobHandler', 'job' => 'App\Handlers\StringJobHandler@handle',
                'keys' => [...self::KEYS_8_STRING, 'createdAt', 'delay'],
                'payload' => ['createdAt' => 1767225600, 'delay' => null],
                'data' => ['ids' => [1, 2, 3], 'note' => 'ünïcode'],
                'note' => 'Laravel 13.x string job: same keys as 12.11+ (no deleteWhenMissingModels for string jobs).'],
        ];

        foreach ($fixtures as $file => [$payload, $entry]) {
            $raw = $enc($payload);
            $entry = ['file' => $file, 'kind' => $entry['kind'], 'source' => 'hand-written'] + $entry;
            $entry += ['job' => $handler];
            $this->add($entry, $raw);
        }
    }
}
