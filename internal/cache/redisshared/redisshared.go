// Package redisshared opens what a Laravel app keeps in its Redis for its
// queue workers, whatever the queue connection's driver, so that Go
// workers share it with PHP's:
//
//   - the app's default cache store when its driver is "redis"
//     (CACHE_DRIVER or CACHE_STORE=redis): `php artisan queue:restart`'s
//     signal and the maxExceptions counters (Stores.Cache), unique jobs'
//     locks (Stores.Locks) and the state of RateLimited and
//     WithoutOverlapping job middleware (Stores.StateStores), with the
//     keys CacheManager::createRedisDriver gives them;
//   - a DurationLimiter on every Redis connection of database.redis, for
//     the ...WithRedis job middleware (Stores.DurationLimiters).
//
// Package redis (a redis queue connection) builds its store on it, and
// so does laraworker's CLI for a database queue connection (through
// database.Options), so both reach the keys PHP reaches. Every Redis client
// dials on first use: opening costs no round trip.
package redisshared

import (
	"errors"
	"fmt"

	"github.com/laraworker/laraworker/internal/cache/rediscache"
	"github.com/laraworker/laraworker/internal/cache/redislimiter"
	"github.com/laraworker/laraworker/internal/cache/redislock"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/redis/go-redis/v9"
)

// App is what Open reads from the app's configuration, as config()
// returns it (decoded from JSON).
type App struct {
	// Redis is config('database.redis') (passwords included: never log
	// it). Nil: no Redis connection is known, Open opens nothing.
	Redis map[string]any
	// CacheStore is config('cache.stores.<cache.default>'); the cache
	// pieces are opened only when its "driver" is "redis".
	CacheStore map[string]any
	// StoreName is the name the lock stores and the middleware state are
	// keyed by (appconfig.Config.CacheStore), CachePrefix the store's
	// prefix (appconfig.Config.CachePrefix: the store's own "prefix", else
	// cache.prefix).
	StoreName, CachePrefix string
	// Version is the app's Laravel version: the redis store's key prefix
	// and the connections' defaults depend on it. Required.
	Version string
}

// Stores are the pieces Open built, as redis.Options and
// database.Options take them. Close closes their clients.
type Stores struct {
	// Cache is the app's default cache store (nil unless its driver is
	// redis): values on the store's "connection", keys behind the
	// connection's prefix and the store's.
	Cache jobqueue.Cache
	// Locks are the store's locks on its "lock_connection" (else its
	// connection), keyed by App.StoreName; empty unless the store is redis.
	Locks map[string]jobqueue.LockStore
	// StateStores are where job middleware keep their state in the store,
	// keyed by App.StoreName (whole keys: the store prefix is in
	// StateStore.Prefix); empty unless the store is redis.
	StateStores map[string]jobqueue.StateStore
	// DurationLimiters are the ...WithRedis middleware's limiters, by
	// config/database.php connection name; a connection Go cannot read is
	// left out (a job naming it goes back to PHP, saying so).
	DurationLimiters map[string]jobqueue.DurationLimiter

	closers []func() error
}

// IsRedisStore tells whether a cache store's config (config('cache.stores.
// <name>')) has driver "redis".
func IsRedisStore(store map[string]any) bool { return phpStr(store["driver"]) == "redis" }

// Open builds the Stores on the app's Redis connections. An error names
// the setting at fault and never holds a password.
func Open(app App) (*Stores, error) {
	s := &Stores{
		Locks:            map[string]jobqueue.LockStore{},
		StateStores:      map[string]jobqueue.StateStore{},
		DurationLimiters: map[string]jobqueue.DurationLimiter{},
	}
	if app.Redis == nil {
		return s, nil
	}
	if app.Version == "" {
		return nil, errors.New("redisshared: the app's Laravel version is needed to read its redis config")
	}
	if IsRedisStore(app.CacheStore) {
		if err := s.cacheStore(app); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.durationLimiters(app); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the Redis clients Open made.
func (s *Stores) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// client is a client on the named connection of database.redis.
func (s *Stores) client(app App, name string) (redisproto.RedisConfig, redis.UniversalClient, error) {
	conn, err := redisproto.RedisConnection(name, app.Redis, app.Version)
	if err != nil {
		return conn, nil, err
	}
	c, err := redisproto.NewClient(conn)
	if err != nil {
		return conn, nil, err
	}
	s.closers = append(s.closers, c.Close)
	return conn, c, nil
}

// cacheStore sets up the app's default cache store, a redis one, as
// CacheManager::createRedisDriver does: values on its "connection", locks
// on its "lock_connection", keys behind the connection's prefix and the
// store's (which RedisStore writes as CACHE_PREFIX + ":" before Laravel
// 11).
func (s *Stores) cacheStore(app App) error {
	storePrefix := appconfig.RedisStorePrefix(app.CachePrefix, app.Version)
	name := orDefault(phpStr(app.CacheStore["connection"]), "default")
	conn, client, err := s.client(app, name)
	if err != nil {
		return fmt.Errorf("redisshared: the %s cache store: %w", app.StoreName, err)
	}
	s.Cache = rediscache.New(client, conn.Prefix+storePrefix)
	state := jobqueue.StateStore{Driver: "redis", Prefix: storePrefix, Cache: rediscache.New(client, conn.Prefix)}

	lockName := orDefault(phpStr(app.CacheStore["lock_connection"]), name)
	lockConn, lockClient, err := s.client(app, lockName)
	if err != nil {
		return fmt.Errorf("redisshared: the %s cache store's lock connection: %w", app.StoreName, err)
	}
	single, ok := lockClient.(*redis.Client)
	if !ok {
		return fmt.Errorf("redisshared: the %s cache store takes its locks on the cluster %q; unique jobs' locks on a cluster are not supported", app.StoreName, lockName)
	}
	s.Locks[app.StoreName] = redislock.NewWithClient(single, lockConn.Prefix+storePrefix)
	state.Locks = redislock.NewWithClient(single, lockConn.Prefix)
	s.StateStores[app.StoreName] = state
	return nil
}

// durationLimiters are the DurationLimiters of the ...WithRedis job
// middleware on every Redis connection of the app's config.
func (s *Stores) durationLimiters(app App) error {
	for name := range app.Redis {
		if name == "client" || name == "options" || name == "clusters" {
			continue
		}
		if _, err := redisproto.RedisConnection(name, app.Redis, app.Version); err != nil {
			continue // not a connection Go reads: a job naming it goes back to PHP, saying so
		}
		conn, client, err := s.client(app, name)
		if err != nil {
			return fmt.Errorf("redisshared: redis connection %q: %w", name, err)
		}
		s.DurationLimiters[name] = redislimiter.New(client, conn.Prefix, nil)
	}
	return nil
}

// phpStr is a config scalar as a string ("" for null and arrays).
func phpStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprint(x)
	case bool:
		if x {
			return "1"
		}
	}
	return ""
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
