package appconfig

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// loadEnv is Load on the .env and the environment alone.
func loadEnv(opts Options) (Config, error) {
	opts.EnvOnly = true
	cfg, _, err := Load(context.Background(), opts)
	return cfg, err
}

// TestZeroConfigTakesLaravelsDefaults: a Config that names only what
// differs is complete after WithDefaults, with the values a loader gives
// for an empty .env; set fields stay.
func TestZeroConfigTakesLaravelsDefaults(t *testing.T) {
	got := Config{}.WithDefaults()
	want := Config{Driver: EngineSQLite, Database: filepath.Join("database", "database.sqlite"),
		AppCipher: "AES-256-CBC", AppTimezone: "UTC", ConnectionName: "database",
		JobsTable: "jobs", FailedTable: "failed_jobs", BatchesTable: "job_batches", DefaultQueue: "default", RetryAfter: 90,
		CacheTable: "cache", CacheLockTable: "cache_locks"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Config{}.WithDefaults() = %v\nwant %v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
	pg := Config{Driver: "postgres", JobsTable: "q_jobs", RetryAfter: 30}.WithDefaults()
	if pg.Driver != EnginePgSQL || pg.Host != "127.0.0.1" || pg.Port != 5432 || pg.Database != "laravel" || pg.Username != "root" ||
		pg.JobsTable != "q_jobs" || pg.RetryAfter != 30 || pg.FailedTable != "failed_jobs" {
		t.Errorf("postgres: %v", pg)
	}
	if again := pg.WithDefaults(); !reflect.DeepEqual(again, pg) {
		t.Errorf("WithDefaults twice changed %v into %v", pg, again)
	}

	// What the loader gives for nothing configured is the same Config,
	// the SQLite path made the app's.
	dir := t.TempDir()
	loaded, err := loadEnv(Options{BaseDir: dir, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	want.Database = filepath.Join(dir, "database", "database.sqlite")
	loaded.Redis = RedisConfig{}
	loaded.CachePrefix = ""
	if !reflect.DeepEqual(loaded, want) {
		t.Errorf("loaded from nothing: %v\nwant %v", loaded, want)
	}
}

// TestRetryAfterZeroIsNotTheDefault: an app's retry_after of 0 stays 0
// through WithDefaults (a zero field is the default 90).
func TestRetryAfterZeroIsNotTheDefault(t *testing.T) {
	cfg, err := loadEnv(Options{BaseDir: t.TempDir(), Environ: []string{"DB_QUEUE_RETRY_AFTER=0"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RetryAfter != RetryAfterZero || cfg.WithDefaults().RetryAfterSeconds() != 0 {
		t.Errorf("retry_after 0 read as %d (%d s in effect)", cfg.RetryAfter, cfg.WithDefaults().RetryAfterSeconds())
	}
	if s := cfg.String(); !strings.Contains(s, "RetryAfter:0}") {
		t.Errorf("String() = %s", s)
	}
	if got := (Config{}).RetryAfterSeconds(); got != 90 {
		t.Errorf("unset retry_after in effect: %d", got)
	}
	if err := (Config{RetryAfter: -2}).WithDefaults().Validate(); err == nil {
		t.Error("retry_after -2 accepted")
	}
}

// TestRetryAfterSourcesInOrder: each of retry_after's sources wins over
// those below it, as Load documents (without PHP here; the PHP answer is
// TestAppConfigThroughPHP's).
func TestRetryAfterSourcesInOrder(t *testing.T) {
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "artisan"), "<?php\n")
	writeFile(t, filepath.Join(app, "composer.lock"), `{"packages":[{"name":"laravel/framework","version":"v10.48.0"}]}`)
	writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_QUEUE_RETRY_AFTER=11\n")
	queuePHP := func(retryAfter string) {
		writeFile(t, filepath.Join(app, "config", "queue.php"), `<?php
return ['default' => 'database', 'connections' => ['database' => ['driver' => 'database', 'table' => 'jobs'`+retryAfter+`]]];
`)
	}
	load := func(environ []string, overrides map[string]string) int {
		t.Helper()
		cfg, _, err := Load(context.Background(), Options{AppDir: app, PHP: PHPOff, Environ: environ, Overrides: overrides})
		if err != nil {
			t.Fatal(err)
		}
		return cfg.RetryAfter
	}
	flag := map[string]string{"DB_QUEUE_RETRY_AFTER": "77"}
	queuePHP(`, 'retry_after' => (int) env('DB_QUEUE_RETRY_AFTER', 90)`)
	for _, c := range []struct {
		what     string
		environ  []string
		override map[string]string
		want     int
	}{
		{"flag over everything", []string{"LARAWORKER_DB_QUEUE_RETRY_AFTER=55", "DB_QUEUE_RETRY_AFTER=33"}, flag, 77},
		{"LARAWORKER_ variable over the app", []string{"LARAWORKER_DB_QUEUE_RETRY_AFTER=55", "DB_QUEUE_RETRY_AFTER=33"}, nil, 55},
		{"the config's env() sees the environment over the .env", []string{"DB_QUEUE_RETRY_AFTER=33"}, nil, 33},
		{"the config's env() reads the .env", []string{}, nil, 11},
	} {
		if got := load(c.environ, c.override); got != c.want {
			t.Errorf("%s: retry_after %d, want %d", c.what, got, c.want)
		}
	}
	queuePHP(`, 'retry_after' => 120`)
	if got := load([]string{"DB_QUEUE_RETRY_AFTER=33"}, nil); got != 120 {
		t.Errorf("a config file's literal over the .env and environment: %d, want 120", got)
	}
	queuePHP(``)
	if got := load([]string{}, nil); got != 60 {
		t.Errorf("a connection without retry_after: %d, want the connector's 60", got)
	}
	os.RemoveAll(filepath.Join(app, "config"))
	if got := load([]string{}, nil); got != 11 {
		t.Errorf("no config files: the .env's %d, want 11", got)
	}
	os.Remove(filepath.Join(app, ".env"))
	if got := load([]string{}, nil); got != 90 {
		t.Errorf("nothing anywhere: %d, want Laravel's 90", got)
	}
}
