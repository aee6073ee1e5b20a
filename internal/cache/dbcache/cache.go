package dbcache

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// Cache is Laravel's database cache store (Illuminate\Cache\DatabaseStore):
// rows (key, value, expiration) with PHP-serialized values. PHP workers
// keep two pieces of shared state there that Go must see too: the
// maxExceptions counters (`job-exceptions:<uuid>`) and the queue:restart
// signal (`illuminate:queue:restart`).
type Cache struct {
	db     *sqldb.DB
	table  string
	prefix string
}

// New is the database cache store on table (DB_CACHE_TABLE, "cache"),
// keys prefixed with the cache prefix, as CacheManager builds it.
func New(db *sqldb.DB, table, prefix string) *Cache {
	return &Cache{db: db, table: table, prefix: prefix}
}

func (c *Cache) sql(format string) string {
	return c.db.Dialect.Rebind(fmt.Sprintf(format, c.db.Dialect.Quote(c.table), c.db.Dialect.Quote("key"), c.db.Dialect.Quote("value"), c.db.Dialect.Quote("expiration")))
}

// Get returns the PHP-serialized value of key, or ok=false when it is
// missing or expired (an expired row is deleted, as DatabaseStore::get does).
func (c *Cache) Get(ctx context.Context, key string) (value []byte, ok bool, err error) {
	var raw []byte
	var expiration int64
	err = c.db.Pool.QueryRowContext(ctx, c.sql("select %[3]s, %[4]s from %[1]s where %[2]s = ?"), c.prefix+key).Scan(&raw, &expiration)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if c.db.UnixNow() >= expiration {
		return nil, false, c.Forget(ctx, key)
	}
	return c.decode(raw), true, nil
}

// Put stores a PHP-serialized value for ttl (insert, else update).
func (c *Cache) Put(ctx context.Context, key string, serialized []byte, ttl time.Duration) error {
	expiration := c.db.UnixNow() + int64(ttl/time.Second)
	value := c.encode(serialized)
	return c.db.InTx(ctx, func(tx *sql.Tx, _ int) error {
		res, err := tx.ExecContext(ctx, c.sql("update %[1]s set %[3]s = ?, %[4]s = ? where %[2]s = ?"), value, expiration, c.prefix+key)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, c.sql("insert into %[1]s (%[2]s, %[3]s, %[4]s) values (?, ?, ?)"), c.prefix+key, value, expiration)
		return err
	})
}

// Add stores a PHP-serialized value for ttl only when key is missing or
// expired, and reports whether it did (DatabaseStore::add: an insert;
// when the key exists, an update that only takes an expired row).
func (c *Cache) Add(ctx context.Context, key string, serialized []byte, ttl time.Duration) (bool, error) {
	now := c.db.UnixNow()
	expiration := now + int64(ttl/time.Second)
	value := c.encode(serialized)
	_, err := c.db.Pool.ExecContext(ctx, c.sql("insert into %[1]s (%[2]s, %[3]s, %[4]s) values (?, ?, ?)"), c.prefix+key, value, expiration)
	if err == nil {
		return true, nil
	}
	if !c.db.Dialect.IsUniqueViolation(err) {
		return false, err
	}
	res, err := c.db.Pool.ExecContext(ctx, c.sql("update %[1]s set %[3]s = ?, %[4]s = ? where %[2]s = ? and %[4]s <= ?"), value, expiration, c.prefix+key, now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Forget deletes key.
func (c *Cache) Forget(ctx context.Context, key string) error {
	_, err := c.db.Pool.ExecContext(ctx, c.sql("delete from %[1]s where %[2]s = ?"), c.prefix+key)
	return err
}

// Increment adds one to a numeric value as DatabaseStore::increment does
// (a locked read and an update in one transaction) and returns the new
// value; ok is false when the key is missing or not numeric.
func (c *Cache) Increment(ctx context.Context, key string) (n int64, ok bool, err error) {
	err = c.db.InTx(ctx, func(tx *sql.Tx, _ int) error {
		n, ok = 0, false
		query := "select %[3]s from %[1]s where %[2]s = ?"
		if fu := c.db.Dialect.ForUpdate(); fu != "" {
			query += " " + fu
		}
		rows, err := tx.QueryContext(ctx, c.sql(query), c.prefix+key)
		if err != nil {
			return err
		}
		var raw []byte
		found := rows.Next()
		if found {
			err = rows.Scan(&raw)
		}
		rows.Close()
		if err != nil || !found {
			return err
		}
		current, numeric := phpNumeric(c.decode(raw))
		if !numeric {
			return nil
		}
		n, ok = current+1, true
		_, err = tx.ExecContext(ctx, c.sql("update %[1]s set %[3]s = ? where %[2]s = ?"), c.encode(phpInt(n)), c.prefix+key)
		return err
	})
	return n, ok, err
}

// encode and decode apply DatabaseStore's PostgreSQL rule: values with NUL
// bytes are stored base64-encoded, and values without ':' or ';' are read
// as base64.
func (c *Cache) encode(serialized []byte) []byte {
	if c.db.Dialect.Name() == appconfig.EnginePgSQL && strings.ContainsRune(string(serialized), 0) {
		return []byte(base64.StdEncoding.EncodeToString(serialized))
	}
	return serialized
}

func (c *Cache) decode(raw []byte) []byte {
	if c.db.Dialect.Name() == appconfig.EnginePgSQL && !strings.ContainsAny(string(raw), ":;") {
		if b, err := base64.StdEncoding.DecodeString(string(raw)); err == nil {
			return b
		}
	}
	return raw
}

// phpInt is serialize() of an int.
func phpInt(n int64) []byte { return []byte("i:" + strconv.FormatInt(n, 10) + ";") }

// phpNumeric reads the serialized scalars PHP's is_numeric accepts and
// returns (int) of them: i:N; d:F; and numeric s:...; strings.
func phpNumeric(v []byte) (int64, bool) {
	s := string(v)
	switch {
	case strings.HasPrefix(s, "i:") && strings.HasSuffix(s, ";"):
		n, err := strconv.ParseInt(s[2:len(s)-1], 10, 64)
		return n, err == nil
	case strings.HasPrefix(s, "d:") && strings.HasSuffix(s, ";"):
		f, err := strconv.ParseFloat(s[2:len(s)-1], 64)
		return int64(f), err == nil
	case strings.HasPrefix(s, "s:") && strings.HasSuffix(s, "\";"):
		i := strings.IndexByte(s, '"')
		if i < 0 {
			return 0, false
		}
		text := strings.TrimSpace(s[i+1 : len(s)-2])
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, true
		}
		f, err := strconv.ParseFloat(text, 64)
		return int64(f), err == nil
	}
	return 0, false
}
