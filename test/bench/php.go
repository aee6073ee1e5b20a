package bench

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CopyLaravelApp is the copy laraworker bench makes of a Laravel app
// (below), for the benchmarks that live in modules of their own
// (cmd/asynqbench): the app at src copied to dst with envFile as its
// .env and the job classes App\Jobs\BenchNoopJob and BenchPhpOnlyJob.
func CopyLaravelApp(src, dst, envFile string) error { return copyLaravelApp(src, dst, envFile) }

// copyLaravelApp copies the app without its .env, databases, logs and
// caches, gives it the bench .env, reads the table names from it and adds
// a job class whose handle() does nothing.
func copyLaravelApp(src, dst, envFile string) error {
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if skipInAppCopy(rel, d) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return err
	}
	for _, dir := range []string{"storage/logs", "storage/framework/cache/data", "storage/framework/views", "bootstrap/cache"} {
		if err := os.MkdirAll(filepath.Join(dst, dir), 0o755); err != nil {
			return err
		}
	}
	env, err := os.ReadFile(envFile)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dst, ".env"), env, 0o600); err != nil {
		return err
	}
	if err := patchQueueConfig(filepath.Join(dst, "config", "queue.php")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dst, "app", "Jobs", "BenchNoopJob.php"), []byte(benchNoopJobPHP), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, "app", "Jobs", "BenchPhpOnlyJob.php"), []byte(strings.ReplaceAll(benchNoopJobPHP, "BenchNoopJob", "BenchPhpOnlyJob")), 0o644)
}

func skipInAppCopy(rel string, d fs.DirEntry) bool {
	switch {
	case rel == ".env", rel == "storage/logs", rel == "bootstrap/cache", rel == "storage/framework":
		return true
	case !d.IsDir() && strings.HasPrefix(rel, "database/") && strings.Contains(d.Name(), ".sqlite"):
		return true
	}
	return false
}

// patchQueueConfig makes the copy's table names come from the .env.
func patchQueueConfig(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(data)
	for _, r := range [][2]string{
		{`'table' => 'jobs',`, `'table' => env('DB_QUEUE_TABLE', 'jobs'),`},
		{`'table' => 'job_batches',`, `'table' => env('QUEUE_BATCHES_TABLE', 'job_batches'),`},
		{`'table' => 'failed_jobs',`, `'table' => env('QUEUE_FAILED_TABLE', 'failed_jobs'),`},
	} {
		if !strings.Contains(s, r[0]) {
			return fmt.Errorf("%s: cannot find %s to point it at the bench tables", path, r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

const benchNoopJobPHP = `<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

// Written by laraworker bench into its temporary copy of the app.
class BenchNoopJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function handle()
    {
    }
}
`
