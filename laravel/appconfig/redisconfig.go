package appconfig

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// RedisConfig is the Redis connection Laravel's redis cache store takes
// its locks on (config/cache.php stores.redis.lock_connection, "default"
// unless REDIS_CACHE_LOCK_CONNECTION says "cache"), read as the skeleton's
// config/database.php reads it.
type RedisConfig struct {
	// Client is REDIS_CLIENT (phpredis or predis); both prefix keys alike.
	Client string
	// Addr is host:port (REDIS_HOST, REDIS_PORT or REDIS_URL).
	Addr     string
	Username string
	Password Secret
	// DB is the lock connection's database: REDIS_DB (0) for "default",
	// REDIS_CACHE_DB (1) for "cache".
	DB int
	// TLS is set by a tls:// or rediss:// REDIS_URL.
	TLS bool
	// Prefix is the connection's key prefix (REDIS_PREFIX, else the
	// skeleton's slug(APP_NAME)_database_), which the PHP client puts
	// before every key, the cache prefix included.
	Prefix string
	// StorePrefix is the redis cache store's own prefix, which Laravel 8-10
	// (RedisStore::setPrefix) writes as CACHE_PREFIX + ":" and 11+ as
	// CACHE_PREFIX; LoadConfig guesses the version as the cache prefix's
	// default does (CACHE_STORE is 11+); RedisStorePrefix recomputes it for
	// a known version.
	StorePrefix string
	// LockConnection is the connection name; Err is set when it is one Go
	// cannot read from the environment, or one that is not a single server
	// (a Redis Sentinel setup, whose sentinels and master no Addr can say:
	// package internal/redisproto's RedisConnection reads it from the app's
	// database.redis).
	LockConnection string
	Err            error
}

// Keys under which the loaders tell redisSettings what the app's PHP
// said (they are no .env variables): the lock connection's name in
// config/database.php, which it reads as the skeleton's "default" slot,
// and that the connection is written there as a list of servers.
const (
	lockConnectionName    = "laraworker:redis-lock-connection"
	lockConnectionServers = "laraworker:redis-lock-connection-servers"
)

func redisSettings(v map[string]string) (RedisConfig, error) {
	c := RedisConfig{
		Client:         orDefault(v["REDIS_CLIENT"], "phpredis"),
		Username:       v["REDIS_USERNAME"],
		Password:       Secret(v["REDIS_PASSWORD"]),
		LockConnection: orDefault(v["REDIS_CACHE_LOCK_CONNECTION"], "default"),
	}
	if p, set := v["REDIS_PREFIX"]; set {
		c.Prefix = p
	} else {
		c.Prefix = phpSlug(orDefault(v["APP_NAME"], "laravel")) + "_database_"
	}
	host, port := orDefault(v["REDIS_HOST"], "127.0.0.1"), orDefault(v["REDIS_PORT"], "6379")
	if _, err := strconv.Atoi(port); err != nil {
		return c, errors.New("appconfig: REDIS_PORT is not a number")
	}
	c.Addr = net.JoinHostPort(host, port)
	dbVar, dbDefault := "REDIS_DB", "0"
	switch c.LockConnection {
	case "default":
	case "cache":
		dbVar, dbDefault = "REDIS_CACHE_DB", "1"
	default:
		c.Err = fmt.Errorf("REDIS_CACHE_LOCK_CONNECTION names the redis connection %q, which only config/database.php defines; laraworker reads the skeleton's \"default\" and \"cache\"", c.LockConnection)
	}
	db, err := strconv.Atoi(orDefault(v[dbVar], dbDefault))
	if err != nil || db < 0 {
		return c, fmt.Errorf("appconfig: %s is not a database number", dbVar)
	}
	c.DB = db
	if name := v[lockConnectionName]; name != "" && v["REDIS_CACHE_LOCK_CONNECTION"] == "default" {
		c.LockConnection = name
	}
	if name := v[lockConnectionServers]; name != "" {
		c.Err = fmt.Errorf("the redis connection %q is a list of servers (Redis Sentinel) in config/database.php, not one host and port: laraworker reads it from the app's database.redis (redisqueue.RedisConnection), never from REDIS_HOST", name)
	}
	if raw := v["REDIS_URL"]; raw != "" {
		if err := c.applyURL(raw); err != nil {
			return c, err
		}
	}
	return c, nil
}

// applyURL merges REDIS_URL as Laravel's ConfigurationUrlParser does: its
// parts win over the separate variables. The URL never appears in errors.
func (c *RedisConfig) applyURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("appconfig: REDIS_URL is not a valid URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "redis", "tcp":
	case "rediss", "tls":
		c.TLS = true
	default:
		return errors.New("appconfig: REDIS_URL: want a redis://, rediss://, tcp:// or tls:// URL")
	}
	port := u.Port()
	if port == "" {
		port = "6379"
	}
	c.Addr = net.JoinHostPort(u.Hostname(), port)
	if u.User != nil {
		if name := u.User.Username(); name != "" {
			c.Username = name
		}
		if pw, ok := u.User.Password(); ok {
			c.Password = Secret(pw)
		}
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return errors.New("appconfig: REDIS_URL: the path must be a database number")
		}
		c.DB = n
	}
	return nil
}

// RedisStorePrefix is the prefix RedisStore puts before lock names for the
// cache prefix on the given Laravel version: 8-10 add ":" to a non-empty
// prefix ("magic prefixing", removed in 11.0).
func RedisStorePrefix(cachePrefix, laravelVersion string) string {
	if cachePrefix != "" && VersionCompare(laravelVersion, "11") < 0 {
		return cachePrefix + ":"
	}
	return cachePrefix
}

// String prints the settings with the password redacted.
func (c RedisConfig) String() string {
	pw := ""
	if c.Password.IsSet() {
		pw = redacted
	}
	return fmt.Sprintf("appconfig.RedisConfig{Client:%s Addr:%s Username:%s Password:%s DB:%d TLS:%t Prefix:%s StorePrefix:%s LockConnection:%s}",
		c.Client, c.Addr, c.Username, pw, c.DB, c.TLS, c.Prefix, c.StorePrefix, c.LockConnection)
}

// GoString makes %#v redacting too.
func (c RedisConfig) GoString() string { return c.String() }
