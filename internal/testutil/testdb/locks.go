package testdb

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// WithLocks gives cfg a database cache store (WithCache) with a fresh lock
// table too; create both with CreateCacheTable and CreateLockTable.
func WithLocks(t testing.TB, cfg appconfig.Config) appconfig.Config {
	t.Helper()
	cfg = WithCache(t, cfg)
	cfg.CacheLockTable = "cache_locks_" + strings.TrimPrefix(cfg.JobsTable, "jobs_")
	return cfg
}

// CreateLockTable creates the cache_locks table `php artisan cache:table`
// makes: key (primary), owner, expiration.
func CreateLockTable(t testing.TB, q *database.Queue) {
	t.Helper()
	d := q.Dialect()
	table := d.Quote(q.Config().CacheLockTable)
	ddl := fmt.Sprintf("create table %s (%s varchar(255) not null primary key, %s varchar(255) not null, %s integer not null)",
		table, d.Quote("key"), d.Quote("owner"), d.Quote("expiration"))
	if _, err := q.DB().Exec(ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.DB().Exec("drop table " + table) })
}

// HoldLock inserts a lock as DatabaseLock::acquire does: the prefixed
// name, owner, and an expiration ttl from now.
func HoldLock(t testing.TB, q *database.Queue, name, owner string, ttl time.Duration) {
	t.Helper()
	d := q.Dialect()
	query := d.Rebind(fmt.Sprintf("insert into %s (%s, %s, %s) values (?, ?, ?)", d.Quote(q.Config().CacheLockTable),
		d.Quote("key"), d.Quote("owner"), d.Quote("expiration")))
	if _, err := q.DB().Exec(query, q.Config().CachePrefix+name, owner, time.Now().Add(ttl).Unix()); err != nil {
		t.Fatal(err)
	}
}

// ForEachEngine runs fn as a parallel subtest per engine, for tests that
// open their queue themselves.
func ForEachEngine(t *testing.T, fn func(t *testing.T, engine string)) {
	for _, engine := range Engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, engine)
		})
	}
}
