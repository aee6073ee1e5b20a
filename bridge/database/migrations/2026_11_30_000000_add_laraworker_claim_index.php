<?php

use Illuminate\Database\Migrations\Migration;
use Illuminate\Support\Facades\DB;

/**
 * laraworker's claim index on the database queue's jobs table, the same
 * schema `laraworker tables --index` creates (dbqueue/SQL.md): two indexes,
 * (queue, class, available_at, id) and (queue, available_at, id), and on
 * MySQL/MariaDB a VIRTUAL generated column holding the payload's
 * displayName. It replaces the indexes of earlier versions (they held
 * reserved_at). Laravel's writers and workers never name them; laraworker
 * workers started afterwards claim through them. down() removes them (and
 * any of earlier versions) again.
 *
 * Published by `php artisan vendor:publish --tag=laraworker-migrations`.
 */
class AddLaraworkerClaimIndex extends Migration
{
    /** Index names of earlier laraworker versions (they held reserved_at). */
    private const PREVIOUS = ['_queue_reserved_at_available_at_index', '_laraworker_class_index', '_laraworker_claim_index'];

    public function up()
    {
        [$db, $table, $name] = $this->target();
        $driver = $db->getDriverName();
        $q = function (string $id) use ($db) { return $db->getQueryGrammar()->wrap($id); };
        $t = $db->getQueryGrammar()->wrapTable($table);
        $class = $q('laraworker_class');
        // Neither index holds reserved_at: a claim's update then changes no
        // indexed column.
        $rest = "{$q('available_at')}, {$q('id')}";
        $classIndex = $q($name.'_laraworker_class_available_index');
        $queueIndex = $q($name.'_laraworker_available_index');
        switch ($driver) {
            case 'mysql':
            case 'mariadb':
                $p = $q('payload');
                if (! $db->getSchemaBuilder()->hasColumn($table, 'laraworker_class')) {
                    $db->statement("alter table {$t} add column {$class} varchar(255) generated always as "
                        ."(case when json_valid({$p}) then left(json_unquote(json_extract({$p}, '$.displayName')), 255) end) virtual");
                }
                if (! $this->mysqlHasIndex($db, $table, $name.'_laraworker_class_available_index')) {
                    $db->statement("create index {$classIndex} on {$t} ({$q('queue')}, {$class}, {$rest})");
                }
                if (! $this->mysqlHasIndex($db, $table, $name.'_laraworker_available_index')) {
                    $db->statement("create index {$queueIndex} on {$t} ({$q('queue')}, {$rest})");
                }
                break;
            case 'pgsql':
                $expr = "({$q('payload')}::json ->> 'displayName')";
                $db->statement("create index if not exists {$classIndex} on {$t} ({$q('queue')}, {$expr}, {$rest})");
                $db->statement("create index if not exists {$queueIndex} on {$t} ({$q('queue')}, {$rest})");
                break;
            case 'sqlite':
                $p = $q('payload');
                $expr = "(case when json_valid({$p}) then json_extract({$p}, '$.displayName') end) collate nocase";
                $db->statement("create index if not exists {$classIndex} on {$t} ({$q('queue')}, {$expr}, {$rest})");
                $db->statement("create index if not exists {$queueIndex} on {$t} ({$q('queue')}, {$rest})");
                break;
        }
        // What `laraworker tables --index` of an earlier version made.
        $this->dropIndexes($db, $table, $name, self::PREVIOUS);
    }

    public function down()
    {
        [$db, $table, $name] = $this->target();
        $t = $db->getQueryGrammar()->wrapTable($table);
        $this->dropIndexes($db, $table, $name, array_merge(['_laraworker_class_available_index', '_laraworker_available_index'], self::PREVIOUS));
        if (in_array($db->getDriverName(), ['mysql', 'mariadb'], true) && $db->getSchemaBuilder()->hasColumn($table, 'laraworker_class')) {
            $db->statement("alter table {$t} drop column {$db->getQueryGrammar()->wrap('laraworker_class')}");
        }
    }

    /** Drops the indexes $name.$suffix that exist. */
    private function dropIndexes($db, string $table, string $name, array $suffixes): void
    {
        $q = function (string $id) use ($db) { return $db->getQueryGrammar()->wrap($id); };
        $t = $db->getQueryGrammar()->wrapTable($table);
        $mysql = in_array($db->getDriverName(), ['mysql', 'mariadb'], true);
        foreach ($suffixes as $suffix) {
            if (! $mysql) {
                $db->statement("drop index if exists {$q($name.$suffix)}");
            } elseif ($this->mysqlHasIndex($db, $table, $name.$suffix)) {
                $db->statement("drop index {$q($name.$suffix)} on {$t}");
            }
        }
    }

    /** MySQL has no "if (not) exists" for indexes: ask the catalogue. */
    private function mysqlHasIndex($db, string $table, string $index): bool
    {
        return $db->selectOne('select count(*) as n from information_schema.statistics where table_schema = database() '
            .'and table_name = ? and index_name = ?', [$db->getTablePrefix().$table, $index])->n > 0;
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
