// Package testdb gives tests outside package laravel a real database per
// engine with freshly named tables: MariaDB (LARAWORKER_TEST_MYSQL_DSN,
// default root@127.0.0.1:3306/test), PostgreSQL (LARAWORKER_TEST_PG_DSN,
// default postgres@127.0.0.1:5432/test) and SQLite in a temp dir. A server
// that cannot be reached skips the test, unless LARAWORKER_TEST_REQUIRE_DB
// is set (CI sets it), which fails it.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/laraworker/laraworker/laravel"
)

// Engines are the drivers every behaviour is tested on.
var Engines = []string{laravel.EngineMySQL, laravel.EnginePgSQL, laravel.EngineSQLite}

// Config returns a configuration for engine with unique table names.
func Config(t testing.TB, engine string) laravel.Config {
	t.Helper()
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	sfx := hex.EncodeToString(b)
	cfg := laravel.Config{
		Driver: engine, AppTimezone: "UTC", AppCipher: "AES-256-CBC", ConnectionName: "database",
		JobsTable: "jobs_" + sfx, FailedTable: "failed_jobs_" + sfx, BatchesTable: "job_batches_" + sfx,
		DefaultQueue: "default", RetryAfter: 90,
	}
	switch engine {
	case laravel.EngineMySQL:
		mc, err := mysql.ParseDSN(envOr("LARAWORKER_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test"))
		if err != nil {
			t.Fatal(err)
		}
		host, port, _ := net.SplitHostPort(mc.Addr)
		cfg.Host, cfg.Database, cfg.Username, cfg.Password = host, mc.DBName, mc.User, laravel.Secret(mc.Passwd)
		cfg.Port, _ = strconv.Atoi(port)
	case laravel.EnginePgSQL:
		pc, err := pgx.ParseConfig(envOr("LARAWORKER_TEST_PG_DSN", "postgres://postgres@127.0.0.1:5432/test"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Host, cfg.Port, cfg.Database, cfg.Username, cfg.Password = pc.Host, int(pc.Port), pc.Database, pc.User, laravel.Secret(pc.Password)
	case laravel.EngineSQLite:
		cfg.Database = filepath.Join(t.TempDir(), "database.sqlite")
	}
	return cfg
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Open opens a queue on cfg, creates its tables and drops them after the
// test.
func Open(t testing.TB, cfg laravel.Config, opts ...laravel.Option) *laravel.Queue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := laravel.Open(ctx, cfg, opts...)
	if err != nil {
		if cfg.Driver != laravel.EngineSQLite && os.Getenv("LARAWORKER_TEST_REQUIRE_DB") == "" {
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

// ForEach runs fn as a subtest per engine with a fresh queue.
func ForEach(t *testing.T, fn func(t *testing.T, q *laravel.Queue)) {
	for _, engine := range Engines {
		t.Run(engine, func(t *testing.T) {
			fn(t, Open(t, Config(t, engine)))
		})
	}
}

// WithCache sets cfg up to use a database cache store (as an app with
// CACHE_DRIVER=database has) in a fresh table.
func WithCache(t testing.TB, cfg laravel.Config) laravel.Config {
	t.Helper()
	cfg.CacheStore, cfg.CacheTable, cfg.CachePrefix = "database", "cache_"+strings.TrimPrefix(cfg.JobsTable, "jobs_"), "laravel_cache"
	return cfg
}

// CreateCacheTable creates the table `php artisan cache:table` makes.
func CreateCacheTable(t testing.TB, q *laravel.Queue) {
	t.Helper()
	d := q.Dialect()
	value := "text"
	if d.Name() == laravel.EngineMySQL {
		value = "mediumtext"
	}
	ddl := fmt.Sprintf("create table %s (%s varchar(255) not null primary key, %s %s not null, %s integer not null)",
		d.Quote(q.Config().CacheTable), d.Quote("key"), d.Quote("value"), value, d.Quote("expiration"))
	if _, err := q.DB().Exec(ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.DB().Exec("drop table " + d.Quote(q.Config().CacheTable)) })
}
