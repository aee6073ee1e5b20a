<?php

// What Laravel Horizon 5.x reads of its process records, written for the
// tests from Horizon's source (laravel/horizon v5.29.1, and the 5.x branch
// after its Redis Cluster support, PR #1760): the repositories' reads
// (src/Repositories/RedisMasterSupervisorRepository.php and
// RedisSupervisorRepository.php: names(), get(), longestActiveTimeout()),
// and what the screens and commands make of them
// (src/Http/Controllers/MasterSupervisorController.php,
// DashboardStatsController.php, src/Console/ListCommand.php,
// SupervisorsCommand.php, StatusCommand.php), through phpredis as Horizon
// runs it: the prefix as OPT_PREFIX, a pipeline on one server, a
// MULTI/EXEC on a cluster (UsesClusterAwarePipeline).
//
//     php horizon-reads.php SERVER PREFIX [PLAN_JSON APP_ENV]
//
// SERVER is host:port, or cluster:host:port,host:port for a Redis Cluster.
// PLAN_JSON is ProvisioningPlan's plan (environments with the defaults
// applied): the dashboard lists a master's planned supervisors it does not
// run as inactive. Prints one JSON object.

require '/usr/share/php/Illuminate/Support/autoload.php';

[$server, $prefix] = array_slice($argv, 1, 2);
$plan = json_decode($argv[3] ?? '{}', true) ?: [];
$appEnv = $argv[4] ?? 'production';

if (str_starts_with($server, 'cluster:')) {
    $redis = new RedisCluster(null, explode(',', substr($server, 8)));
    $batch = function (callable $fill) use ($redis) {
        $redis->multi();
        $fill($redis);

        return $redis->exec();
    };
} else {
    [$host, $port] = explode(':', $server);
    $redis = new Redis();
    $redis->connect($host, (int) $port);
    $batch = function (callable $fill) use ($redis) {
        $pipe = $redis->pipeline();
        $fill($pipe);

        return $pipe->exec();
    };
}
$redis->setOption(Redis::OPT_PREFIX, $prefix);

// RedisMasterSupervisorRepository::all(): names() is the masters scored in
// the last 14 seconds, get() their hashes.
$names = $redis->zRevRangeByScore('masters', '+inf', (string) (time() - 14));
$records = $batch(function ($pipe) use ($names) {
    foreach ($names as $name) {
        $pipe->hMGet('master:'.$name, ['name', 'pid', 'status', 'supervisors', 'environment']);
    }
});
$masters = collect($records)->map(function ($record) {
    if (! is_array($record)) {
        return null;
    }
    $record = array_values($record);

    return ! $record[0] ? null : (object) [
        'name' => $record[0], 'environment' => $record[4], 'pid' => $record[1],
        'status' => $record[2], 'supervisors' => json_decode($record[3], true),
    ];
})->filter()->values()->all();

// RedisSupervisorRepository::all(): the last 29 seconds.
$names = $redis->zRevRangeByScore('supervisors', '+inf', (string) (time() - 29));
$records = $batch(function ($pipe) use ($names) {
    foreach ($names as $name) {
        $pipe->hMGet('supervisor:'.$name, ['name', 'master', 'pid', 'status', 'processes', 'options']);
    }
});
$supervisors = collect($records)->filter()->map(function ($record) {
    $record = array_values($record);

    return ! $record[0] ? null : (object) [
        'name' => $record[0], 'master' => $record[1], 'pid' => $record[2], 'status' => $record[3],
        'processes' => json_decode($record[4], true), 'options' => json_decode($record[5], true),
    ];
})->filter()->values()->all();

// MasterSupervisorController@index: each master with its supervisors, and
// the plan's supervisors of its environment it does not run, inactive.
$grouped = collect($supervisors)->sortBy('name')->groupBy('master');
$workers = collect($masters)->keyBy('name')->sortBy('name')->map(function ($master, $name) use ($grouped, $plan, $appEnv) {
    $master = clone $master;
    $master->supervisors = ($grouped->get($name) ?? collect())->merge(
        collect($plan[$master->environment ?? $appEnv] ?? [])->map(function ($value, $key) use ($name) {
            return (object) ['name' => $name.':'.$key, 'master' => $name, 'status' => 'inactive', 'processes' => [],
                'options' => ['queue' => is_array($value['queue'] ?? null) ? implode(',', $value['queue']) : ($value['queue'] ?? ''),
                    'balance' => $value['balance'] ?? null]];
        })
    )->unique('name')->values();
    // The dashboard's Vue page: the supervisor's name without
    // "<master>:", options.queue with ", ", the processes summed.
    $master->rows = $master->supervisors->map(fn ($s) => [
        'display' => str_replace($name.':', '', $s->name),
        'queues' => str_replace(',', ', ', $s->options['queue']),
        'connection' => $s->options['connection'] ?? null,
        'processes' => array_sum($s->processes),
        'balancing' => $s->options['balance'] ? ucfirst($s->options['balance']) : 'Disabled',
        'status' => $s->status,
    ])->all();

    return $master;
})->values()->all();

// DashboardStatsController: the process count, the status, paused masters.
$status = ! $masters ? 'inactive' : (collect($masters)->every(fn ($m) => $m->status === 'paused') ? 'paused' : 'running');

echo json_encode([
    'masters' => $masters,
    'supervisors' => $supervisors,
    'workers' => $workers,
    'processes' => collect($supervisors)->reduce(fn ($carry, $s) => $carry + collect($s->processes)->sum(), 0),
    'status' => $status,
    'pausedMasters' => collect($masters)->filter(fn ($m) => $m->status === 'paused')->count(),
    // ListCommand: the supervisors' short names.
    'list' => collect($masters)->map(fn ($m) => [$m->name, $m->pid,
        $m->supervisors ? collect($m->supervisors)->map(fn ($s) => explode(':', $s, 2)[1])->implode(', ') : 'None', $m->status])->all(),
    // SupervisorsCommand: name, pid, status, workers, balancing.
    'supervisorsCommand' => collect($supervisors)->map(fn ($s) => [$s->name, $s->pid, $s->status,
        collect($s->processes)->map(fn ($count, $queue) => $queue.' ('.$count.')')->implode(', '), $s->options['balance']])->all(),
    // RedisSupervisorRepository::longestActiveTimeout().
    'longestActiveTimeout' => collect($supervisors)->max(fn ($s) => $s->options['timeout']) ?: 0,
    // StatusCommand's exit status.
    'statusCommand' => ! $masters ? 2 : (collect($masters)->contains(fn ($m) => $m->status === 'paused') ? 1 : 0),
]);
