<?php

use Illuminate\Database\Migrations\Migration;
use Illuminate\Support\Facades\DB;

/**
 * laraworker's claim index on the database queue's jobs table, the same
 * schema `laraworker tables --index` creates (laravel/SQL.md): two indexes
 * and, on MySQL/MariaDB, a VIRTUAL generated column holding the payload's
 * displayName. Laravel's writers and workers never name them; laraworker
 * workers started afterwards claim through them. down() removes them again.
 *
 * Published by `php artisan vendor:publish --tag=laraworker-migrations`.
 */
class AddLaraworkerClaimIndex extends Migration
{
    public function up()
    {
        [$db, $table, $name] = $this->target();
        $driver = $db->getDriverName();
        $q = function (string $id) use ($db) { return $db->getQueryGrammar()->wrap($id); };
        $t = $db->getQueryGrammar()->wrapTable($table);
        $class = $q('laraworker_class');
        $claim = [$q('queue'), $q('reserved_at'), $q('available_at'), $q('id')];
        switch ($driver) {
            case 'mysql':
            case 'mariadb':
                $p = $q('payload');
                $db->statement("alter table {$t} add column {$class} varchar(255) generated always as "
                    ."(case when json_valid({$p}) then left(json_unquote(json_extract({$p}, '$.displayName')), 255) end) virtual");
                $db->statement("create index {$q($name.'_laraworker_class_index')} on {$t} ({$q('queue')}, {$class}, {$q('reserved_at')}, {$q('available_at')}, {$q('id')})");
                $db->statement("create index {$q($name.'_laraworker_claim_index')} on {$t} (".implode(', ', $claim).')');
                break;
            case 'pgsql':
                $expr = "({$q('payload')}::json ->> 'displayName')";
                $db->statement("create index if not exists {$q($name.'_laraworker_class_index')} on {$t} ({$q('queue')}, {$expr}, {$q('reserved_at')}, {$q('available_at')}, {$q('id')})");
                $db->statement("create index if not exists {$q($name.'_laraworker_claim_index')} on {$t} (".implode(', ', $claim).')');
                break;
            case 'sqlite':
                $p = $q('payload');
                $expr = "(case when json_valid({$p}) then json_extract({$p}, '$.displayName') end) collate nocase";
                $db->statement("create index if not exists {$q($name.'_laraworker_class_index')} on {$t} ({$q('queue')}, {$expr}, {$q('reserved_at')}, {$q('available_at')}, {$q('id')})");
                $db->statement("create index if not exists {$q($name.'_laraworker_claim_index')} on {$t} (".implode(', ', $claim).')');
                break;
        }
    }

    public function down()
    {
        [$db, $table, $name] = $this->target();
        $q = function (string $id) use ($db) { return $db->getQueryGrammar()->wrap($id); };
        $t = $db->getQueryGrammar()->wrapTable($table);
        foreach (['_laraworker_class_index', '_laraworker_claim_index'] as $suffix) {
            if (in_array($db->getDriverName(), ['mysql', 'mariadb'], true)) {
                $db->statement("drop index {$q($name.$suffix)} on {$t}");
            } else {
                $db->statement("drop index if exists {$q($name.$suffix)}");
            }
        }
        if (in_array($db->getDriverName(), ['mysql', 'mariadb'], true)) {
            $db->statement("alter table {$t} drop column {$q('laraworker_class')}");
        }
    }

    /**
     * The database queue's connection, its jobs table (without prefix) and
     * the base of the index names as laraworker builds them (prefixed table,
     * lower case, '-' and '.' as '_', like Blueprint::createIndexName).
     */
    private function target(): array
    {
        $queue = config('queue.connections.'.config('queue.default'));
        if (($queue['driver'] ?? null) !== 'database') {
            $queue = config('queue.connections.database', []);
        }
        $db = DB::connection($queue['connection'] ?? null);
        $table = $queue['table'] ?? 'jobs';
        $name = strtolower(str_replace(['-', '.'], '_', $db->getTablePrefix().$table));

        return [$db, $table, $name];
    }
}
