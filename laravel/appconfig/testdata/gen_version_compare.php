<?php
// Regenerates version_compare.json: PHP's own version_compare() results for
// every ordered pair of the strings below. Run: php gen_version_compare.php > version_compare.json
$versions = [
    '', '1', '1.0', '1.0.0', '1.0.0.0', '8.0.0', '8.0.1', '8.0.01', '8.0.35-0ubuntu0.22.04.1', '9.1.0', '5.7.44-log',
    '8.0.mysql_aurora.3.04.0', '8.0.23', '8.0.23-vitess', '19.0', '19.0.1', '10.6.0', '10.5.21', '10.11.6',
    '9.5', '9.4.26', '16.2 (Debian 16.2-1.pgdg120+2)', '15.20', '1.0dev', '1.0-dev', '1.0alpha', '1.0a1',
    '1.0b', '1.0beta2', '1.0RC1', '1.0rc1', '1.0#', '1.0pl1', '1.0p1', '1.0x', '1.0.x', '1..0', '1.0.',
    '.1', '-1', '1-', '1_0', '1+0', 'a', 'b', 'dev', '#N#', '#', '1.0 ', ' 1.0', '1.0~beta', 'abc1',
    '99999999999999999999999', '10.6.0-MariaDB', '1.2.3pl', '1.2.3p', '1.2.3-alpha.1', 'MariaDB',
];
$out = [];
foreach ($versions as $a) {
    foreach ($versions as $b) {
        $out[] = [$a, $b, version_compare($a, $b)];
    }
}
echo json_encode($out, JSON_UNESCAPED_SLASHES), "\n";
