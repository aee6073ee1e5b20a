<?php

// What Laravel Horizon 5.x's control commands do, written for the tests
// from Horizon's source (laravel/horizon v5.29.1 and the 5.x branch:
// src/Console/PauseCommand.php, ContinueCommand.php, TerminateCommand.php,
// PauseSupervisorCommand.php, ContinueSupervisorCommand.php;
// src/RedisHorizonCommandQueue.php push()), through phpredis as Horizon
// reads its records (RedisMasterSupervisorRepository::all(),
// RedisSupervisorRepository::all()), with Laravel's Str (Debian's 8.83).
//
//     php horizon-commands.php SERVER PREFIX ACTION [NAME]
//
// ACTION pause, continue, terminate: every master of this host (its name
// starting with MasterSupervisor::basename(), Str::slug(gethostname())) is
// sent SIGUSR2, SIGCONT or SIGTERM (TerminateCommand then stores the
// restart stamp in the app's cache: the test runs queue:restart, which
// stores the same). pause-supervisor, continue-supervisor NAME: the first
// supervisor of this host whose name ends with NAME is sent SIGUSR2 or
// SIGCONT. push NAME COMMAND [OPTIONS_JSON]: RedisHorizonCommandQueue::push
// onto commands:NAME. Prints the pids signalled as JSON.

require '/usr/share/php/Illuminate/Support/autoload.php';

use Illuminate\Support\Arr;
use Illuminate\Support\Str;

[$server, $prefix, $action] = array_slice($argv, 1, 3);
[$host, $port] = explode(':', $server);
$redis = new Redis();
$redis->connect($host, (int) $port);
$redis->setOption(Redis::OPT_PREFIX, $prefix);

function records($redis, $set, $since, $fields)
{
    $names = $redis->zRevRangeByScore($set, '+inf', (string) (time() - $since));
    $pipe = $redis->pipeline();
    foreach ($names as $name) {
        $pipe->hMGet(rtrim($set, 's').':'.$name, $fields);
    }

    return collect($pipe->exec())->map(fn ($r) => is_array($r) && $r['name'] ? (object) $r : null)->filter()->values()->all();
}

$basename = Str::slug(gethostname());
$signal = ['pause' => SIGUSR2, 'continue' => SIGCONT, 'terminate' => SIGTERM,
    'pause-supervisor' => SIGUSR2, 'continue-supervisor' => SIGCONT][$action] ?? null;

if ($action === 'push') {
    $redis->rPush('commands:'.$argv[4], json_encode(['command' => $argv[5], 'options' => json_decode($argv[6] ?? '[]', true)]));
    echo '[]';
    exit;
}
if (str_ends_with($action, '-supervisor')) {
    $supervisor = collect(records($redis, 'supervisors', 29, ['name', 'pid']))->first(
        fn ($s) => Str::startsWith($s->name, $basename) && Str::endsWith($s->name, $argv[4])
    );
    $pids = $supervisor ? [$supervisor->pid] : [];
} else {
    $masters = collect(records($redis, 'masters', 14, ['name', 'pid']))->filter(fn ($m) => Str::startsWith($m->name, $basename))->all();
    $pids = Arr::pluck($masters, 'pid');
}
foreach ($pids as $pid) {
    if (! posix_kill((int) $pid, $signal)) {
        fwrite(STDERR, "posix_kill $pid: ".posix_strerror(posix_get_last_error())."\n");
        exit(1);
    }
}
echo json_encode(array_values($pids));
