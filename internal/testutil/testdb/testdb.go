package testdb

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// Engines are the drivers every behaviour is tested on.
var Engines = []string{appconfig.EngineMySQL, appconfig.EnginePgSQL, appconfig.EngineSQLite}

// Config returns a configuration for engine with unique table names.
func Config(t testing.TB, engine string) appconfig.Config {
	t.Helper()
	sfx := testdsn.Suffix(t)
	cfg := appconfig.Config{
		Driver: engine, AppTimezone: "UTC", AppCipher: "AES-256-CBC", ConnectionName: "database",
		JobsTable: "jobs_" + sfx, FailedTable: "failed_jobs_" + sfx, BatchesTable: "job_batches_" + sfx,
		DefaultQueue: "default", RetryAfter: 90,
	}
	var srv testdsn.Server
	switch engine {
	case appconfig.EngineMySQL:
		srv = testdsn.MySQL(t)
	case appconfig.EnginePgSQL:
		srv = testdsn.PostgreSQL(t)
	case appconfig.EngineSQLite:
		cfg.Database = filepath.Join(t.TempDir(), "database.sqlite")
		return cfg
	}
	cfg.Host, cfg.Port, cfg.Socket, cfg.Database, cfg.Username, cfg.Password = srv.Host, srv.Port, srv.Socket, srv.Database, srv.User, appconfig.Secret(srv.Password)
	return cfg
}

// Open opens a queue on cfg, creates its tables and drops them after the
// test.
func Open(t testing.TB, cfg appconfig.Config) *database.Queue {
	t.Helper()
	return OpenWith(t, cfg, database.Options{})
}

// OpenWith is Open with the store's options (a fake clock).
func OpenWith(t testing.TB, cfg appconfig.Config, opts database.Options) *database.Queue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := database.Open(ctx, cfg, opts)
	if err != nil {
		if cfg.Driver != appconfig.EngineSQLite && !testdsn.Required() {
			t.Skipf("%s not reachable: %v", cfg.Driver, err)
		}
		t.Fatal(err)
	}
	if err := q.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := q.DropTables(context.Background()); err != nil {
			t.Errorf("drop tables: %v", err)
		}
		q.Close()
	})
	return q
}

// ForEach runs fn as a subtest per engine with a fresh queue. The
// engines run in parallel: each test has its own tables (or SQLite file).
func ForEach(t *testing.T, fn func(t *testing.T, q *database.Queue)) {
	for _, engine := range Engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, Open(t, Config(t, engine)))
		})
	}
}

// WithCache sets cfg up to use a database cache store (as an app with
// CACHE_DRIVER=database has) in a fresh table.
func WithCache(t testing.TB, cfg appconfig.Config) appconfig.Config {
	t.Helper()
	cfg.CacheStore, cfg.CacheTable, cfg.CachePrefix = "database", "cache_"+strings.TrimPrefix(cfg.JobsTable, "jobs_"), "laravel_cache"
	return cfg
}

// CreateCacheTable creates the table `php artisan cache:table` makes.
func CreateCacheTable(t testing.TB, q *database.Queue) {
	t.Helper()
	d := q.Dialect()
	value := "text"
	if d.Name() == appconfig.EngineMySQL {
		value = "mediumtext"
	}
	ddl := fmt.Sprintf("create table %s (%s varchar(255) not null primary key, %s %s not null, %s integer not null)",
		d.Quote(q.Config().CacheTable), d.Quote("key"), d.Quote("value"), value, d.Quote("expiration"))
	if _, err := q.DB().Exec(ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.DB().Exec("drop table " + d.Quote(q.Config().CacheTable)) })
}
