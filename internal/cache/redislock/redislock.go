// Package redislock releases the locks of Laravel's redis cache store
// (Illuminate\Cache\RedisLock) from Go, for unique jobs whose lock lives in
// Redis. A lock is a plain key holding its owner, named
// <connection prefix><store prefix><lock name>: the PHP client (phpredis
// or predis) puts the connection's prefix (REDIS_PREFIX) before every key,
// and the store puts its prefix (CACHE_PREFIX, with ":" on Laravel 8-10)
// before the lock name. It is released by deleting
// the key (forceRelease) or, for an owner, by Laravel's compare-and-delete
// Lua script.
package redislock

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/redis/go-redis/v9"
)

// releaseScript is the semantics of Laravel's LuaScripts::releaseLock:
// delete the key only while it holds the owner.
var releaseScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then
	return redis.call("del", KEYS[1])
else
	return 0
end`)

// Store is the lock side of one redis cache store.
type Store struct {
	client *redis.Client
	prefix string // connection prefix + cache prefix
}

// New connects (lazily: go-redis dials on first use) to the app's Redis
// lock connection; keys are cfg.Prefix + cfg.StorePrefix + the lock name.
func New(cfg appconfig.RedisConfig) (*Store, error) {
	if cfg.Err != nil {
		return nil, cfg.Err
	}
	opts := &redis.Options{
		Addr:     cfg.Addr,
		Username: cfg.Username,
		Password: cfg.Password.Reveal(),
		DB:       cfg.DB,
		// No client name, no RESP3 handshake surprises: plain commands.
		Protocol:        2,
		DisableIdentity: true,
	}
	if cfg.TLS {
		opts.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return &Store{client: redis.NewClient(opts), prefix: cfg.Prefix + cfg.StorePrefix}, nil
}

// NewWithClient uses an existing client; prefix is the whole key prefix
// (connection prefix + cache prefix).
func NewWithClient(client *redis.Client, prefix string) *Store {
	return &Store{client: client, prefix: prefix}
}

// Client is the store's Redis client (its connection).
func (s *Store) Client() *redis.Client { return s.client }

// Key is the Redis key of the lock name.
func (s *Store) Key(name string) string { return s.prefix + name }

// Acquire takes the lock for owner (RedisLock::acquire): SET NX with an
// expiry of seconds, or, for 0 seconds, SETNX with none.
func (s *Store) Acquire(ctx context.Context, name, owner string, seconds int64) (bool, error) {
	if seconds > 0 {
		err := s.client.SetArgs(ctx, s.Key(name), owner, redis.SetArgs{Mode: "NX", TTL: time.Duration(seconds) * time.Second}).Err()
		if errors.Is(err, redis.Nil) {
			return false, nil
		}
		return err == nil, s.wrap(err)
	}
	ok, err := s.client.SetNX(ctx, s.Key(name), owner, 0).Result()
	return ok, s.wrap(err)
}

// ForceRelease deletes the lock whoever holds it (RedisLock::forceRelease).
func (s *Store) ForceRelease(ctx context.Context, name string) error {
	return s.wrap(s.client.Del(ctx, s.Key(name)).Err())
}

// ReleaseOwned deletes the lock only while owner holds it
// (restoreLock($name, $owner)->release()).
func (s *Store) ReleaseOwned(ctx context.Context, name, owner string) error {
	err := releaseScript.Run(ctx, s.client, []string{s.Key(name)}, owner).Err()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return s.wrap(err)
}

// Ping checks that the lock connection answers.
func (s *Store) Ping(ctx context.Context) error { return s.wrap(s.client.Ping(ctx).Err()) }

// Close closes the connection pool.
func (s *Store) Close() error { return s.client.Close() }

// wrap names the store without the address's credentials: go-redis
// errors carry no password.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redis lock store: %w", err)
}
