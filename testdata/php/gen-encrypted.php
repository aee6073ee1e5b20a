<?php
// Generates testdata/encrypted/vectors.json with Debian's real Laravel
// Illuminate\Encryption\Encrypter (8.83), and checks that every ciphertext Go
// wrote to testdata/encrypted/go-made.json decrypts in PHP.
//
// Run from the repository root:
//   go test ./payload -run TestWriteGoMadeVectors -args -update-go-made   # refreshes go-made.json
//   php testdata/php/gen-encrypted.php
//
// The keys are TEST-ONLY and derived in the open: the first N bytes of
// sha256("laraworker-test-key/<cipher>/<role>"), role "current" or "previous".
// encrypt_test.go derives the same bytes.

set_include_path('/usr/share/php' . PATH_SEPARATOR . get_include_path());
require_once 'Illuminate/Encryption/autoload.php';
require_once 'Illuminate/Queue/autoload.php';
require_once 'Illuminate/Bus/autoload.php';

use Illuminate\Bus\Queueable;
use Illuminate\Container\Container;
use Illuminate\Contracts\Encryption\DecryptException;
use Illuminate\Contracts\Encryption\Encrypter as EncrypterContract;
use Illuminate\Contracts\Queue\ShouldBeEncrypted;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Encryption\Encrypter;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use Illuminate\Queue\SyncQueue;

class ProcessPodcast implements ShouldQueue, ShouldBeEncrypted
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public $podcastId;
    public $notes;
    protected $secret = 'top/secret+value';

    public function __construct($podcastId, $notes)
    {
        $this->podcastId = $podcastId;
        $this->notes = $notes;
    }
}

const CIPHERS = ['aes-128-cbc' => 16, 'aes-256-cbc' => 32, 'aes-128-gcm' => 16, 'aes-256-gcm' => 32];

function test_key(string $cipher, string $role): string
{
    return substr(hash('sha256', "laraworker-test-key/$cipher/$role", true), 0, CIPHERS[$cipher]);
}

function is_aead(string $cipher): bool
{
    return str_ends_with($cipher, 'gcm');
}

// What Queue::createObjectPayload stores in data.command, taken from the real
// payload built by the framework with an Encrypter bound in the container.
function job_command(Encrypter $enc, ProcessPodcast $job): string
{
    $container = new Container();
    $container->instance(EncrypterContract::class, $enc);
    $queue = new SyncQueue();
    $queue->setContainer($container);
    $create = new ReflectionMethod($queue, 'createPayload');
    $create->setAccessible(true);
    $payload = json_decode($create->invoke($queue, $job, 'default'), true);
    return $payload['data']['command'];
}

function try_decrypt(Encrypter $enc, string $payload): array
{
    try {
        return ['plaintext_b64' => base64_encode($enc->decrypt($payload, false))];
    } catch (DecryptException $e) {
        return ['error' => $e->getMessage()];
    }
}

function fields(string $payload): array
{
    return json_decode(base64_decode($payload), true);
}

function pack_fields(array $f, int $flags = JSON_UNESCAPED_SLASHES): string
{
    return base64_encode(json_encode($f, $flags));
}

function mac_for(string $key, array $f): string
{
    return hash_hmac('sha256', $f['iv'] . $f['value'], $key);
}

// Ciphertext of raw blocks whose last byte pattern is chosen by the caller,
// so the padding check (not the MAC) is what rejects it.
function raw_cbc(string $cipher, string $key, string $iv, string $blocks): string
{
    return openssl_encrypt($blocks, $cipher, $key, OPENSSL_ZERO_PADDING, $iv);
}

function tampered_cases(string $cipher): array
{
    $key = test_key($cipher, 'current');
    $enc = new Encrypter($key, $cipher);
    $base = $enc->encrypt('tamper me', false);
    $f = fields($base);
    $cases = [];

    $cases['bad-base64'] = '!!!not base64 at all!!!';
    $cases['bad-json'] = base64_encode('{"iv":"abc",');
    $cases['json-array'] = base64_encode('["iv","value","mac"]');
    $cases['missing-mac'] = pack_fields(array_diff_key($f, ['mac' => 1]));
    $cases['null-value'] = pack_fields(array_merge($f, ['value' => null]));
    $cases['iv-too-short'] = (function () use ($f, $key) {
        $f['iv'] = base64_encode(substr(base64_decode($f['iv']), 0, -1));
        $f['mac'] = $f['mac'] === '' ? '' : mac_for($key, $f);
        return pack_fields($f);
    })();
    $cases['iv-not-strict-base64'] = pack_fields(array_merge($f, ['iv' => '!' . $f['iv']]));
    $cases['wrong-key'] = (new Encrypter(test_key($cipher, 'previous'), $cipher))->encrypt('tamper me', false);
    $cases['value-changed'] = pack_fields(array_merge($f, ['value' => strrev($f['value'])]));
    // Payload framing quirks PHP accepts: lenient base64 and escaped slashes.
    $cases['outer-base64-chunked'] = chunk_split($base, 20, "\n");
    $cases['outer-base64-unpadded'] = rtrim($base, '=');
    $cases['json-escaped-slashes'] = pack_fields($f, 0);
    $json = json_encode($f, JSON_UNESCAPED_SLASHES);
    $cases['json-extra-key'] = base64_encode(substr($json, 0, -1) . ',"extra":[1,{"a":null}]}');
    $cases['json-extra-key-invalid-utf8'] = base64_encode(substr($json, 0, -1) . ",\"extra\":\"\xff\"}");
    $cases['json-duplicate-iv-last-wins'] = base64_encode('{"iv":"garbage",' . substr($json, 1));
    $cases['json-uppercase-keys'] = base64_encode(strtoupper(substr($json, 0, 1)) . str_replace(['"iv"', '"value"', '"mac"'], ['"IV"', '"VALUE"', '"MAC"'], substr($json, 1)));

    if (is_aead($cipher)) {
        $cases['tag-missing'] = pack_fields(array_diff_key($f, ['tag' => 1]));
        $cases['tag-empty'] = pack_fields(array_merge($f, ['tag' => '']));
        $cases['tag-short'] = pack_fields(array_merge($f, ['tag' => base64_encode(substr(base64_decode($f['tag']), 0, 15))]));
        $cases['tag-changed'] = pack_fields(array_merge($f, ['tag' => base64_encode(strrev(base64_decode($f['tag'])))]));
        // Same bytes value||tag, split differently: only the tag length check rejects these.
        $sealed = base64_decode($f['value']) . base64_decode($f['tag']);
        $cases['tag-appended-to-value'] = pack_fields(array_merge($f, ['value' => base64_encode($sealed), 'tag' => '']));
        $cases['tag-24-bytes'] = pack_fields(array_merge($f, ['value' => base64_encode(substr($sealed, 0, -24)), 'tag' => base64_encode(substr($sealed, -24))]));
        $cases['mac-ignored-for-aead'] = pack_fields(array_merge($f, ['mac' => 'not checked']));
        $cases['iv-changed'] = pack_fields(array_merge($f, ['iv' => base64_encode(str_repeat("\0", 12))]));
        return $cases;
    }

    $cases['mac-changed'] = pack_fields(array_merge($f, ['mac' => strrev($f['mac'])]));
    $cases['mac-uppercase'] = pack_fields(array_merge($f, ['mac' => strtoupper($f['mac'])]));
    $cases['mac-empty'] = pack_fields(array_merge($f, ['mac' => '']));
    $cases['tag-on-cbc'] = pack_fields(array_merge($f, ['tag' => base64_encode(str_repeat("\1", 16))]));
    $cases['tag-zero-string-on-cbc'] = pack_fields(array_merge($f, ['tag' => '0']));
    $cases['tag-null-on-cbc'] = pack_fields(array_merge($f, ['tag' => null]));
    $cases['tag-missing-on-cbc'] = pack_fields(array_diff_key($f, ['tag' => 1]));
    $iv = base64_decode($f['iv']);
    $paddingCases = [
        'padding-zero' => str_repeat('A', 15) . "\x00",
        'padding-too-large' => str_repeat('A', 15) . "\x11",
        'padding-inconsistent' => str_repeat('A', 13) . "\x01\x03\x03",
        'padding-full-block-ok' => str_repeat("\x10", 16),
    ];
    foreach ($paddingCases as $name => $blocks) {
        $g = array_merge($f, ['value' => raw_cbc($cipher, $key, $iv, $blocks)]);
        $g['mac'] = mac_for($key, $g);
        $cases[$name] = pack_fields($g);
    }
    foreach (['value-empty' => '', 'value-partial-block' => base64_encode(substr(base64_decode($f['value']), 0, 15))] as $name => $value) {
        $g = array_merge($f, ['value' => $value]);
        $g['mac'] = mac_for($key, $g);
        $cases[$name] = pack_fields($g);
    }
    // openssl_decrypt decodes the value leniently; the MAC covers the text as sent.
    $g = array_merge($f, ['value' => "\n" . $f['value'] . '!']);
    $g['mac'] = mac_for($key, $g);
    $cases['value-lenient-base64'] = pack_fields($g);
    return $cases;
}

function plaintexts(): array
{
    $binary = '';
    for ($i = 0; $i < 256; $i++) {
        $binary .= chr($i);
    }
    return [
        'empty' => '',
        'short' => 'hello',
        'one-block' => '0123456789abcdef',
        'multi-block' => str_repeat('Laravel queue payload / ', 7),
        'binary' => $binary,
        'utf8' => "caf\u{e9} \u{1F680}",
    ];
}

$root = dirname(__DIR__, 2);
$out = [
    'generator' => 'testdata/php/gen-encrypted.php',
    'php_version' => PHP_VERSION,
    'laravel_encrypter' => 'Debian php-laravel-framework ' . (file_exists('/usr/share/php/Illuminate/Foundation/Application.php')
        ? preg_replace('/.*VERSION = \'([^\']+)\'.*/s', '$1', file_get_contents('/usr/share/php/Illuminate/Foundation/Application.php'))
        : 'unknown'),
    'key_derivation' => 'first N bytes of sha256("laraworker-test-key/<cipher>/<role>"), TEST ONLY',
    'keys' => [],
    'vectors' => [],
    'tampered' => [],
    'go_made_verified' => [],
    'base64_decode' => [],
];

// PHP's own base64_decode on framing edge cases, so the Go port can be
// compared with it directly.
$base64Inputs = ['', '=', 'QQ', 'QQ=', 'QQ==', 'QQ===', 'QR==', 'Q', 'Q===', 'QUJD', 'QUJDR', 'QUJDRA', "QU JD\n\tRA==\r",
    'QU!JD', 'QQ==QUJD', 'QUJ=D', "\x00QUJD\xff", '-_-_', 'QUJD====', '====', 'QUJDRA==QQ'];
foreach ($base64Inputs as $in) {
    foreach ([false, true] as $strict) {
        $got = base64_decode($in, $strict);
        $out['base64_decode'][] = ['input_b64' => base64_encode($in), 'strict' => $strict,
            'output_b64' => $got === false ? null : base64_encode($got)];
    }
}

foreach (CIPHERS as $cipher => $size) {
    $key = test_key($cipher, 'current');
    $previous = test_key($cipher, 'previous');
    $out['keys'][$cipher] = ['current' => 'base64:' . base64_encode($key), 'previous' => 'base64:' . base64_encode($previous)];
    // Laravel accepts the cipher name in any case.
    $enc = new Encrypter($key, strtoupper($cipher));

    foreach (plaintexts() as $name => $plain) {
        $out['vectors'][] = [
            'name' => "$cipher/$name", 'cipher' => $cipher, 'key' => 'current', 'kind' => 'string',
            'plaintext_b64' => base64_encode($plain), 'payload' => $enc->encrypt($plain, false),
        ];
    }
    $jobs = [
        'job' => new ProcessPodcast(42, 'short notes'),
        'job-2kb' => new ProcessPodcast(7, str_repeat('The quick brown fox jumps over the lazy dog. ', 42)),
    ];
    foreach ($jobs as $name => $job) {
        $job->onQueue('high')->delay(10);
        $command = job_command($enc, $job);
        $out['vectors'][] = [
            'name' => "$cipher/$name", 'cipher' => $cipher, 'key' => 'current', 'kind' => 'command',
            'plaintext_b64' => base64_encode(serialize(clone $job)), 'payload' => $command,
        ];
    }
    $old = new Encrypter($previous, $cipher);
    $out['vectors'][] = [
        'name' => "$cipher/previous-key", 'cipher' => $cipher, 'key' => 'previous', 'kind' => 'string',
        'plaintext_b64' => base64_encode('made with the old key'), 'payload' => $old->encrypt('made with the old key', false),
    ];

    foreach (tampered_cases($cipher) as $name => $payload) {
        $out['tampered'][] = array_merge(
            ['name' => "$cipher/$name", 'cipher' => $cipher, 'payload' => $payload],
            try_decrypt($enc, $payload)
        );
    }
}

// Self-check: every vector round-trips through PHP itself.
foreach ($out['vectors'] as $v) {
    $k = $v['key'] === 'current' ? test_key($v['cipher'], 'current') : test_key($v['cipher'], 'previous');
    $got = (new Encrypter($k, $v['cipher']))->decrypt($v['payload'], $v['kind'] === 'command');
    if ($got !== base64_decode($v['plaintext_b64'])) {
        fwrite(STDERR, "self-check failed for {$v['name']}\n");
        exit(1);
    }
}

$goMade = "$root/testdata/encrypted/go-made.json";
if (file_exists($goMade)) {
    foreach (json_decode(file_get_contents($goMade), true)['vectors'] as $v) {
        $enc = new Encrypter(test_key($v['cipher'], 'current'), $v['cipher']);
        $got = try_decrypt($enc, $v['payload']);
        if (($got['plaintext_b64'] ?? null) !== $v['plaintext_b64']) {
            fwrite(STDERR, "Go-made vector {$v['name']} does not decrypt in PHP: " . json_encode($got) . "\n");
            exit(1);
        }
        if ($v['kind'] === 'command') {
            // A worker runs unserialize(decrypt()): the result must be the inner O: string.
            $inner = $enc->decrypt($v['payload']);
            if (!is_string($inner) || !str_starts_with($inner, 'O:')) {
                fwrite(STDERR, "Go-made command {$v['name']} does not unserialize to an O: string\n");
                exit(1);
            }
        }
        $out['go_made_verified'][] = $v['name'] . ' ' . hash('sha256', $v['payload']);
    }
}

file_put_contents("$root/testdata/encrypted/vectors.json", json_encode($out, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n");
printf("wrote %d vectors, %d tampered cases; verified %d Go-made ciphertexts\n",
    count($out['vectors']), count($out['tampered']), count($out['go_made_verified']));
