package dbcache

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/laraworker/laraworker/internal/sqldb"
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
	// timeout is the expiry of a lock taken for 0 seconds.
	timeout int64
	// prune decides, per acquisition, whether expired locks are deleted
	// (DatabaseLock's lottery: 2 in 100).
	prune func() bool
}

// DefaultLockTimeout is the expiry DatabaseLock gives a lock taken for 0
// seconds: a day (Laravel 10.17+ reads the store's lock_timeout).
const DefaultLockTimeout = 86400

// NewLocks is the database store's locks: table DB_CACHE_LOCK_TABLE
// (default cache_locks), keys prefixed with the cache prefix, as
// CacheManager builds the database store.
func NewLocks(db *sqldb.DB, table, prefix string) *Locks {
	if table == "" {
		table = "cache_locks"
	}
	return &Locks{db: db, table: table, prefix: prefix, timeout: DefaultLockTimeout, prune: lottery}
}

// WithTimeout sets the expiry, in seconds, of a lock taken for 0 seconds
// (config/cache.php stores.database.lock_timeout, Laravel 10.17+).
func (l *Locks) WithTimeout(seconds int64) *Locks {
	if seconds > 0 {
		l.timeout = seconds
	}
	return l
}

// WithLottery sets the odds that an acquisition deletes the expired
// locks: wins in of (config/cache.php stores.database.lock_lottery,
// Laravel's [2, 100]); 0 wins never prunes.
func (l *Locks) WithLottery(wins, of int) *Locks {
	if of > 0 {
		l.prune = func() bool { return rand.IntN(of) < wins }
	}
	return l
}

// lottery is DatabaseLock's [2, 100]: random_int(1, 100) <= 2.
func lottery() bool { return rand.IntN(100) < 2 }

// Acquire takes the lock for owner (DatabaseLock::acquire): it inserts
// the row; when the key exists, it takes it over only if owner already
// holds it or it has expired. Then, 2 times in 100, it deletes the
// expired locks. seconds <= 0 is the store's lock timeout.
func (l *Locks) Acquire(ctx context.Context, name, owner string, seconds int64) (bool, error) {
	now := l.db.UnixNow()
	if seconds <= 0 {
		seconds = l.timeout
	}
	expiration := now + seconds
	acquired := true
	_, err := l.db.Pool.ExecContext(ctx, l.sql("insert into %[1]s (%[2]s, %[3]s, %[4]s) values (?, ?, ?)"), l.prefix+name, owner, expiration)
	if err != nil {
		if !l.db.Dialect.IsUniqueViolation(err) {
			return false, l.wrap(err)
		}
		res, err := l.db.Pool.ExecContext(ctx, l.sql("update %[1]s set %[3]s = ?, %[4]s = ? where %[2]s = ? and (%[3]s = ? or %[4]s <= ?)"),
			owner, expiration, l.prefix+name, owner, now)
		if err != nil {
			return false, l.wrap(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, l.wrap(err)
		}
		acquired = n >= 1
	}
	if l.prune() {
		// As DatabaseLock::pruneExpiredLocks, a failure here does not
		// change the answer: the lock is taken or not already.
		_, _ = l.db.Pool.ExecContext(ctx, l.sql("delete from %[1]s where %[4]s <= ?"), now)
	}
	return acquired, nil
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
	return d.Rebind(fmt.Sprintf(format, d.Quote(l.table), d.Quote("key"), d.Quote("owner"), d.Quote("expiration")))
}

func (l *Locks) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("dbcache: cache lock table %s: %w", l.table, err)
}
