<?php

use Illuminate\Database\Migrations\Migration;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Support\Facades\Schema;

/**
 * One row per handled job, written by the job itself (PHP or Go worker), so an
 * end-to-end test can see who ran what and which values were deserialized.
 */
class CreateJobRunsTable extends Migration
{
    public function up()
    {
        Schema::create('job_runs', function (Blueprint $table) {
            $table->id();
            $table->string('uuid')->nullable()->index();
            $table->string('class');
            $table->unsignedInteger('attempt');
            $table->string('worker');
            $table->text('result')->nullable();
            $table->timestamp('created_at')->nullable();
        });
    }

    public function down()
    {
        Schema::dropIfExists('job_runs');
    }
}
