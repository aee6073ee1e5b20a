// Package rediscache is the part of Laravel's redis cache store
// (Illuminate\Cache\RedisStore) that PHP and Go workers share when an
// app's default cache store is "redis": the queue:restart signal
// (`illuminate:queue:restart`) and the maxExceptions counters
// (`job-exceptions:<uuid>`). It implements jobqueue.Cache.
//
// A key is <connection prefix><store prefix><name>: the PHP client
// (phpredis or predis) puts the Redis connection's options.prefix before
// every key, and the store puts its own prefix (the cache prefix, with ":"
// on Laravel 8 to 10) before the name. A value is PHP-serialized, except
// numbers, which RedisStore keeps as their text so that INCRBY works:
// `queue:restart` leaves a plain Unix time.
package rediscache

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/redis/go-redis/v9"
)

// Cache is one redis cache store.
type Cache struct {
	rdb    redis.UniversalClient
	prefix string
}

// New is the store on rdb (the client of the store's "connection"), with
// prefix the connection prefix followed by the store prefix.
func New(rdb redis.UniversalClient, prefix string) *Cache {
	return &Cache{rdb: rdb, prefix: prefix}
}

var _ jobqueue.Cache = (*Cache)(nil)

// Key is the Redis key of name.
func (c *Cache) Key(name string) string { return c.prefix + name }

// Get returns the value of key as PHP-serialized bytes (RedisStore::get:
// a number's text comes back as that string), ok false when it is
// missing.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	raw, err := c.rdb.Get(ctx, c.Key(key)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, c.wrap(err)
	}
	if isNumeric(raw) {
		return serializeString(raw), true, nil
	}
	return []byte(raw), true, nil
}

// Put stores a PHP-serialized value for ttl (at least a second), as
// RedisStore::put does: SETEX, a number as its text.
func (c *Cache) Put(ctx context.Context, key string, serialized []byte, ttl time.Duration) error {
	seconds := max(ttl/time.Second, 1) * time.Second
	return c.wrap(c.rdb.SetEx(ctx, c.Key(key), storedValue(serialized), seconds).Err())
}

// Increment is RedisStore::increment: INCRBY 1 (a missing key starts at
// 0, as in PHP). ok is false when the value is not an integer.
func (c *Cache) Increment(ctx context.Context, key string) (int64, bool, error) {
	n, err := c.rdb.IncrBy(ctx, c.Key(key), 1).Result()
	if err != nil {
		if strings.Contains(err.Error(), "not an integer") {
			return 0, false, nil
		}
		return 0, false, c.wrap(err)
	}
	return n, true, nil
}

// addScript is RedisStore::add's semantics: SETEX only when the key does
// not exist, in one step.
var addScript = redis.NewScript(`if redis.call("exists", KEYS[1]) < 1 then
	return redis.call("setex", KEYS[1], ARGV[2], ARGV[1])
end
return false`)

// Add stores a PHP-serialized value for ttl (at least a second) only when
// key does not exist, and reports whether it did (RedisStore::add).
func (c *Cache) Add(ctx context.Context, key string, serialized []byte, ttl time.Duration) (bool, error) {
	seconds := int64(max(ttl/time.Second, 1))
	err := addScript.Run(ctx, c.rdb, []string{c.Key(key)}, storedValue(serialized), seconds).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, c.wrap(err)
	}
	return true, nil
}

// Forget deletes key.
func (c *Cache) Forget(ctx context.Context, key string) error {
	return c.wrap(c.rdb.Del(ctx, c.Key(key)).Err())
}

func (c *Cache) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redis cache store: %w", err)
}

// storedValue is RedisStore::serialize of the value serialized stands
// for: the text of an int, a float or a numeric string; the serialized
// bytes for anything else.
func storedValue(serialized []byte) string {
	s := string(serialized)
	switch {
	case strings.HasPrefix(s, "i:") && strings.HasSuffix(s, ";"):
		if _, err := strconv.ParseInt(s[2:len(s)-1], 10, 64); err == nil {
			return s[2 : len(s)-1]
		}
	case strings.HasPrefix(s, "d:") && strings.HasSuffix(s, ";"):
		if text := s[2 : len(s)-1]; isNumeric(text) {
			return text
		}
	case strings.HasPrefix(s, "s:") && strings.HasSuffix(s, `";`):
		if i := strings.IndexByte(s, '"'); i > 0 {
			n, err := strconv.Atoi(s[2 : i-1])
			text := s[i+1 : len(s)-2]
			if err == nil && n == len(text) && isNumeric(text) {
				return text
			}
		}
	}
	return s
}

// serializeString is serialize() of a PHP string.
func serializeString(s string) []byte {
	return []byte("s:" + strconv.Itoa(len(s)) + `:"` + s + `";`)
}

// isNumeric is PHP 8's is_numeric for a string: optional surrounding
// whitespace, a sign, digits with an optional fraction and exponent.
func isNumeric(s string) bool {
	s = strings.Trim(s, " \t\n\r\v\f")
	if s == "" {
		return false
	}
	i := 0
	if s[i] == '+' || s[i] == '-' {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}
