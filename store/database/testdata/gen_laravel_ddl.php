<?php
// Prints the DDL that Laravel (Debian php-laravel-framework 8.83, /usr/share/php) compiles
// for the jobs / failed_jobs / job_batches migrations (failed_job_ids as longText,
// the 9.44+ shape) on each engine, using pretend mode (the mysql and pgsql
// connections must be reachable). Tables are named lwjobs, lwfailed, lwbatches;
// the Go test substitutes its own names. Run: php gen_laravel_ddl.php > laravel_ddl.txt
//
// Sections "== ENGINE" are the 8.x-13.5 stubs; "== ENGINE 13.6" the 13.6 stub
// (jobs.attempts unsignedSmallInteger) and "== ENGINE 13.9" the 13.9+ stubs
// (failed_jobs' connection and queue as string, index on connection, queue,
// failed_at), their blueprints as Illuminate/Queue/Console/stubs has them,
// compiled by this Laravel 8.83's grammars.
require '/usr/share/php/Illuminate/Database/autoload.php';
use Illuminate\Database\Capsule\Manager as Capsule;
use Illuminate\Database\Schema\Blueprint;
$c = new Capsule;
$c->addConnection(['driver'=>'mysql','host'=>'127.0.0.1','database'=>'test','username'=>'root','password'=>'','charset'=>'utf8mb4','collation'=>'utf8mb4_unicode_ci'], 'mysql');
$c->addConnection(['driver'=>'pgsql','host'=>'127.0.0.1','database'=>'test','username'=>'postgres','password'=>''], 'pgsql');
$c->addConnection(['driver'=>'sqlite','database'=>':memory:'], 'sqlite');
foreach (['' => [false, false], ' 13.6' => [true, false], ' 13.9' => [true, true]] as $shape => [$small, $indexed])
foreach (['mysql','pgsql','sqlite'] as $d) {
  $s = $c->getConnection($d)->getSchemaBuilder();
  $conn = $c->getConnection($d);
  $q = $conn->pretend(function() use ($s, $small, $indexed) {
    $s->create('lwjobs', function (Blueprint $table) use ($small) {
            $table->bigIncrements('id');
            $table->string('queue')->index();
            $table->longText('payload');
            if ($small) {
                $table->unsignedSmallInteger('attempts');
            } else {
                $table->unsignedTinyInteger('attempts');
            }
            $table->unsignedInteger('reserved_at')->nullable();
            $table->unsignedInteger('available_at');
            $table->unsignedInteger('created_at');
    });
    $s->create('lwfailed', function (Blueprint $table) use ($indexed) {
            $table->id();
            $table->string('uuid')->unique();
            if ($indexed) {
                $table->string('connection');
                $table->string('queue');
            } else {
                $table->text('connection');
                $table->text('queue');
            }
            $table->longText('payload');
            $table->longText('exception');
            $table->timestamp('failed_at')->useCurrent();
            if ($indexed) {
                $table->index(['connection', 'queue', 'failed_at']);
            }
    });
    $s->create('lwbatches', function (Blueprint $table) {
            $table->string('id')->primary();
            $table->string('name');
            $table->integer('total_jobs');
            $table->integer('pending_jobs');
            $table->integer('failed_jobs');
            $table->longText('failed_job_ids');
            $table->mediumText('options')->nullable();
            $table->integer('cancelled_at')->nullable();
            $table->integer('created_at');
            $table->integer('finished_at')->nullable();
    });
  });
  echo "== $d$shape\n"; foreach ($q as $x) echo $x['query'], ";\n";
}
