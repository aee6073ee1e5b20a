<?php

// Drives the installed Laravel's own Illuminate\Queue\RedisQueue (with
// phpredis, as an app would) for the differential tests of package
// redisqueue: one JSON command per line on stdin, one JSON reply per line
// on stdout. The clock is Carbon's test clock, set by every command, so
// PHP and Go compute the same scores.
//
// Environment: REDIS_PORT, REDIS_PREFIX, RETRY_AFTER, MIGRATION_BATCH_SIZE,
// ILLUMINATE_AUTOLOAD (default: Debian's php-laravel-framework autoloader).

require_once getenv('ILLUMINATE_AUTOLOAD') ?: 'Illuminate/autoload.php';

use Illuminate\Container\Container;
use Illuminate\Queue\Jobs\RedisJob;
use Illuminate\Queue\RedisQueue;
use Illuminate\Redis\RedisManager;
use Illuminate\Support\Carbon;

$container = new Container;
$redis = new RedisManager($container, 'phpredis', [
    'options' => ['prefix' => getenv('REDIS_PREFIX')],
    'default' => ['host' => '127.0.0.1', 'port' => (int) getenv('REDIS_PORT'), 'database' => 0],
]);

$args = [$redis, 'default', 'default', (int) getenv('RETRY_AFTER'), null, false];
// 9.23+ takes migration_batch_size; 8.x's constructor has no such argument.
if ((new ReflectionMethod(RedisQueue::class, '__construct'))->getNumberOfParameters() > 6) {
    $args[] = (int) getenv('MIGRATION_BATCH_SIZE');
}
$queue = new RedisQueue(...$args);
$queue->setContainer($container);
$queue->setConnectionName('redis');

function job($queue, $container, $cmd)
{
    return new RedisJob($container, $queue, $cmd['raw'], $cmd['reserved'], 'redis', $cmd['queue']);
}

$version = \Illuminate\Foundation\Application::VERSION;
fwrite(STDOUT, json_encode(['ready' => $version])."\n");

while (($line = fgets(STDIN)) !== false) {
    $cmd = json_decode($line, true);
    Carbon::setTestNow(Carbon::createFromTimestamp($cmd['now']));
    $q = $cmd['queue'] ?? null;
    try {
        switch ($cmd['op']) {
            case 'push':
                $reply = ['id' => $queue->pushRaw($cmd['payload'], $q)];
                break;
            case 'later':
                $later = new ReflectionMethod($queue, 'laterRaw');
                $later->setAccessible(true);
                $reply = ['id' => $later->invoke($queue, $cmd['delay'], $cmd['payload'], $q)];
                break;
            case 'pop':
                $job = $queue->pop($q);
                $reply = $job ? ['raw' => $job->getRawBody(), 'reserved' => $job->getReservedJob(), 'attempts' => $job->attempts(), 'id' => $job->getJobId()] : null;
                break;
            case 'delete':
                job($queue, $container, $cmd)->delete();
                $reply = true;
                break;
            case 'release':
                job($queue, $container, $cmd)->release($cmd['delay']);
                $reply = true;
                break;
            case 'size':
                $reply = $queue->size($q);
                break;
            case 'clear':
                $reply = $queue->clear($q);
                break;
            default:
                throw new InvalidArgumentException('unknown op '.$cmd['op']);
        }
        fwrite(STDOUT, json_encode(['ok' => $reply])."\n");
    } catch (Throwable $e) {
        fwrite(STDOUT, json_encode(['error' => get_class($e).': '.$e->getMessage()])."\n");
    }
}
