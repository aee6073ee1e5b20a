<?php
// Writes testdata/json/cases.json: strings and payload documents with the
// bytes PHP's json_encode produces for them, so Go's PHP-compatible JSON
// writer is checked against real PHP. Run: php testdata/php/gen-json.php
$strings = [
    "", "plain", "slash / and \\ backslash", "quote \" here", "tab\tnew\nline\rcr",
    "nul\0byte", "\x01\x1f\x7f", "héllo wörld", "日本語", "emoji 😀", "line\u{2028}sep\u{2029}",
    "<script>&amp;</script>", "App\\Jobs\\ProcessPodcast", "Illuminate\\Queue\\CallQueuedHandler@call",
    "O:8:\"stdClass\":0:{}", "\0*\0protected", "1.5E-7",
];
$cases = [];
foreach ($strings as $s) {
    $cases[] = [
        'input_base64' => base64_encode($s),
        'unescaped_unicode' => json_encode($s, JSON_UNESCAPED_UNICODE),
        'default' => json_encode($s),
    ];
}
$floats = [0.1, 0.1 + 0.2, 1.0, 2.5, 1e15, 1e16, 1e17, 1e100, 1.5e-7, -0.0, 100.0, 123456789.125];
$floatCases = [];
foreach ($floats as $f) {
    $floatCases[] = ['bits' => bin2hex(pack('E', $f)), 'json' => json_encode($f)];
}
// Payload documents as they sit in jobs.payload, and what queue:retry
// writes back (json_decode assoc + json_encode without flags).
$docs = [
    '{"uuid":"2f1c5e7e-0000-4000-8000-000000000001","displayName":"App\\\\Jobs\\\\Ünïcode","job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":"1,5","timeout":null,"retryUntil":null,"data":{"commandName":"App\\\\Jobs\\\\Ünïcode","command":"O:8:\"stdClass\":1:{s:1:\"a\";s:5:\"h\u00e9llo\";}"}}',
    '{"uuid":"u2","displayName":"Closure (web.php:3)","job":"x","data":{},"tags":[],"empty":{},"list":{"0":"a","1":"b"},"notlist":{"1":"a","0":"b"},"n":1.0,"big":12345678901234567890,"attempts":3,"slash":"a\/b"}',
    '{"uuid":"u3","attempts":null,"emoji":"😀","data":""}',
];
$retry = [];
foreach ($docs as $d) {
    $p = json_decode($d, true);
    if (isset($p['attempts'])) { $p['attempts'] = 0; }
    $retry[] = ['raw' => $d, 'retried' => json_encode($p)];
}
// What json_encode refuses, with json_last_error_msg(): strings that are
// not valid UTF-8 (with and without JSON_UNESCAPED_UNICODE) and INF/NAN.
$refused = [];
foreach (["bad \xff byte", "\xc3", "\xed\xa0\x80", "ok \xe2\x82"] as $s) {
    foreach ([0, JSON_UNESCAPED_UNICODE] as $flags) {
        $ok = json_encode($s, $flags);
        $refused[] = ['input_base64' => base64_encode($s), 'unescaped_unicode' => $flags !== 0,
            'encoded' => $ok !== false, 'error' => json_last_error_msg()];
    }
}
$refusedFloats = [];
foreach ([INF, -INF, NAN] as $f) {
    $ok = json_encode($f);
    $refusedFloats[] = ['bits' => bin2hex(pack('E', $f)), 'encoded' => $ok !== false, 'error' => json_last_error_msg()];
}
$out = ['strings' => $cases, 'floats' => $floatCases, 'retry' => $retry,
    'refused_strings' => $refused, 'refused_floats' => $refusedFloats, 'php' => PHP_VERSION];
file_put_contents(__DIR__ . '/../json/cases.json', json_encode($out, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n");
