<?php

// What Laravel Horizon 5.x starts a supervisor's workers with, written for
// the tests from Horizon's source (laravel/horizon v5.29.1:
// src/ProvisioningPlan.php get(), applyDefaultOptions(), deploy(),
// convert(); src/SupervisorOptions.php's constructor defaults, fromArray()
// and toArray()), with Laravel's Str (Debian's Laravel 8.83).
//
//     php provisioning-plan.php CONFIG_PHP ENV SUPERVISOR
//
// CONFIG_PHP is a PHP array literal: config('horizon') with environments
// and defaults. Prints {"config": what laraworker's read-config.php
// reports of it, "options": the supervisor's toArray(), or "error"}.

require '/usr/share/php/Illuminate/Support/autoload.php';

use Illuminate\Support\Arr;
use Illuminate\Support\Str;

[$literal, $environment, $supervisor] = array_slice($argv, 1, 3);
$config = eval('return '.$literal.';');
$environments = $config['environments'] ?? [];
$defaults = $config['defaults'] ?? [];

$answer = ['config' => [
    'environments' => $environments,
    'environment_keys' => array_map('strval', array_keys($environments)),
    'defaults' => $defaults,
]];

try {
    // applyDefaultOptions: the defaults under each environment.
    $plan = collect($environments)->map(fn ($p) => array_replace_recursive($defaults, $p))->all();
    // deploy(): the first environment key Str::is-matching.
    $supervisors = collect($plan)->first(fn ($_, $name) => Str::is($name, $environment));
    if (empty($supervisors) || ! isset($supervisors[$supervisor])) {
        throw new Exception('no such supervisor');
    }
    // convert(): renamed, camel-cased, lists joined.
    $options = collect($supervisors[$supervisor])->mapWithKeys(function ($value, $key) {
        $key = $key === 'tries' ? 'max_tries' : $key;
        $key = $key === 'processes' ? 'max_processes' : $key;
        $value = $key === 'queue' && is_array($value) ? implode(',', $value) : $value;
        $value = $key === 'backoff' && is_array($value) ? implode(',', $value) : $value;

        return [Str::camel($key) => $value];
    })->all();
    if (isset($options['minProcesses']) && $options['minProcesses'] < 1) {
        throw new Exception('minProcesses must be greater than 0');
    }
    // SupervisorOptions: the constructor's defaults, then fromArray's keys.
    $o = ['balance' => 'off', 'connection' => $options['connection'], 'queue' => null, 'backoff' => 0, 'force' => false,
        'maxProcesses' => 1, 'minProcesses' => 1, 'maxTries' => 0, 'maxTime' => 0, 'maxJobs' => 0, 'memory' => 128,
        'nice' => 0, 'name' => 'master:'.$supervisor, 'workersName' => 'default', 'sleep' => 3, 'timeout' => 60,
        'balanceCooldown' => 3, 'balanceMaxShift' => 1, 'parentId' => 0, 'rest' => 0, 'autoScalingStrategy' => 'time'];
    foreach ($options as $key => $value) {
        $o[$key] = $value;
    }
    $answer['options'] = $o;
} catch (Throwable $e) {
    $answer['error'] = $e->getMessage();
}

echo json_encode($answer);
