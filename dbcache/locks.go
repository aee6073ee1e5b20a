package dbcache

import (
	"context"
	"fmt"

	"github.com/laraworker/laraworker/sqldb"
)

// Locks is the lock side of Laravel's database cache store
// (Illuminate\Cache\DatabaseLock): rows (key, owner, expiration) of the
// cache_locks table, keyed by the store's prefix plus the lock name.
// Unique jobs hold such a lock from dispatch until their worker releases
// it.
type Locks struct {
	db     *sqldb.DB
	table  string
	prefix string
}

// NewLocks is the database store's locks: table DB_CACHE_LOCK_TABLE
// (default cache_locks), keys prefixed with the cache prefix, as
// CacheManager builds the database store.
func NewLocks(db *sqldb.DB, table, prefix string) *Locks {
	if table == "" {
		table = "cache_locks"
	}
	return &Locks{db: db, table: table, prefix: prefix}
}

// ForceRelease deletes the lock whoever owns it (Lock::forceRelease).
func (l *Locks) ForceRelease(ctx context.Context, name string) error {
	_, err := l.db.Pool.ExecContext(ctx, l.sql("delete from %[1]s where %[2]s = ?"), l.prefix+name)
	return l.wrap(err)
}

// ReleaseOwned deletes the lock only while owner holds it
// (restoreLock($name, $owner)->release()).
func (l *Locks) ReleaseOwned(ctx context.Context, name, owner string) error {
	_, err := l.db.Pool.ExecContext(ctx, l.sql("delete from %[1]s where %[2]s = ? and %[3]s = ?"), l.prefix+name, owner)
	return l.wrap(err)
}

// Owner returns the owner of a held lock; ok is false when there is none
// (tests, and `laraworker` diagnostics).
func (l *Locks) Owner(ctx context.Context, name string) (owner string, ok bool, err error) {
	rows, err := l.db.Pool.QueryContext(ctx, l.sql("select %[3]s from %[1]s where %[2]s = ?"), l.prefix+name)
	if err != nil {
		return "", false, l.wrap(err)
	}
	defer rows.Close()
	if rows.Next() {
		ok = true
		err = rows.Scan(&owner)
	}
	if err == nil {
		err = rows.Err()
	}
	return owner, ok, l.wrap(err)
}

func (l *Locks) sql(format string) string {
	d := l.db.Dialect
	return d.Rebind(fmt.Sprintf(format, d.Quote(l.table), d.Quote("key"), d.Quote("owner")))
}

func (l *Locks) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("dbcache: cache lock table %s: %w", l.table, err)
}
