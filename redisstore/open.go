package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/dbqueue"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/rediscache"
	"github.com/laraworker/laraworker/redislimiter"
	"github.com/laraworker/laraworker/redislock"
	"github.com/laraworker/laraworker/redisqueue"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// App is what Open reads from a Laravel app whose queue connection has
// driver "redis": the config arrays as PHP's config() returns them
// (decoded from JSON) and the app's database settings.
type App struct {
	// Connection is the queue connection's name (e.g. "redis").
	Connection string
	// Queue is config('queue.connections.<Connection>'), Redis is
	// config('database.redis') (passwords included: never log it).
	Queue, Redis map[string]any
	// CacheStore is config('cache.stores.<default store>'): when its
	// driver is "redis", the queue:restart signal, the maxExceptions
	// counters and the default store's locks are read in Redis.
	CacheStore map[string]any
	// Version is the app's Laravel version; Horizon is set when
	// laravel/horizon is installed (its connector reads the config).
	Version string
	Horizon bool
	// HorizonConfig is config('horizon') (prefix, use, trim, silenced)
	// when Horizon is installed; nil is Horizon's defaults.
	HorizonConfig map[string]any
	// DB is the app's database: failed_jobs, job_batches and, for a
	// "database" cache store, the cache tables. Its CacheStore and
	// CachePrefix name the default cache store and its prefix.
	DB appconfig.Config
}

// OpenOptions are Open's settings beyond the app's.
type OpenOptions struct {
	DB     dbqueue.Options
	Logger zerolog.Logger
	// Horizon says whether the store writes Horizon's records (package
	// redishorizon): HorizonAuto (the zero value) when the app has
	// Horizon installed (App.Horizon), HorizonOn always, HorizonOff never.
	Horizon HorizonRecords
}

// HorizonRecords says when Horizon's records are written.
type HorizonRecords string

// The values of OpenOptions.Horizon (laraworker's --horizon).
const (
	HorizonAuto HorizonRecords = ""
	HorizonOn   HorizonRecords = "on"
	HorizonOff  HorizonRecords = "off"
)

// ParseHorizonRecords reads --horizon: auto, on or off.
func ParseHorizonRecords(s string) (HorizonRecords, error) {
	switch s {
	case "", "auto":
		return HorizonAuto, nil
	case "on", "off":
		return HorizonRecords(s), nil
	}
	return "", fmt.Errorf("--horizon %q: want auto (when the app has laravel/horizon installed), on or off", s)
}

// Opened is a store Open connected, with what it connected: Close closes
// it all.
type Opened struct {
	*Store
	closers []func() error
}

// Close closes the Redis and database connections Open made.
func (o *Opened) Close() error {
	var errs []error
	for i := len(o.closers) - 1; i >= 0; i-- {
		errs = append(errs, o.closers[i]())
	}
	return errors.Join(errs...)
}

// Open connects to the app's Redis queue connection and database as the
// app's config says, and builds the store on them.
func Open(ctx context.Context, app App, opts OpenOptions) (*Opened, error) {
	o := &Opened{}
	fail := func(err error) (*Opened, error) {
		o.Close()
		return nil, err
	}
	cfg, err := redisqueue.FromLaravel(app.Connection, app.Queue, app.Redis, redisqueue.LaravelOptions{Version: app.Version, Horizon: app.Horizon})
	if err != nil {
		return nil, err
	}
	q, err := redisqueue.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	o.closers = append(o.closers, q.Close)
	dbCfg := app.DB
	dbCfg.ConnectionName = app.Connection
	db, err := dbqueue.Open(ctx, dbCfg, opts.DB)
	if err != nil {
		return fail(err)
	}
	o.closers = append(o.closers, db.Close)
	storeOpts := Options{Logger: opts.Logger}
	if opts.Horizon == HorizonOn || (opts.Horizon == HorizonAuto && app.Horizon) {
		if storeOpts.Horizon, err = o.horizonRecorder(app); err != nil {
			return fail(err)
		}
	}
	if phpStr(app.CacheStore["driver"]) == "redis" {
		if err := o.redisCache(app, &storeOpts); err != nil {
			return fail(err)
		}
	}
	if err := o.durationLimiters(app, &storeOpts); err != nil {
		return fail(err)
	}
	if o.Store, err = New(q, db, storeOpts); err != nil {
		return fail(err)
	}
	return o, nil
}

// redisCache sets up the app's default cache store when it is a redis
// one, as CacheManager::createRedisDriver does: values on its
// "connection", locks on its "lock_connection", keys behind the
// connection's prefix and the store's.
func (o *Opened) redisCache(app App, opts *Options) error {
	storePrefix := appconfig.RedisStorePrefix(app.DB.CachePrefix, app.Version)
	name := orDefault(phpStr(app.CacheStore["connection"]), "default")
	conn, err := redisqueue.RedisConnection(name, app.Redis, app.Version)
	if err != nil {
		return fmt.Errorf("redisstore: the %s cache store: %w", app.DB.CacheStore, err)
	}
	client, err := redisqueue.NewClient(conn)
	if err != nil {
		return err
	}
	o.closers = append(o.closers, client.Close)
	opts.Cache = rediscache.New(client, conn.Prefix+storePrefix)
	state := jobqueue.StateStore{Driver: "redis", Prefix: storePrefix, Cache: rediscache.New(client, conn.Prefix)}

	lockName := orDefault(phpStr(app.CacheStore["lock_connection"]), name)
	lockConn, err := redisqueue.RedisConnection(lockName, app.Redis, app.Version)
	if err != nil {
		return fmt.Errorf("redisstore: the %s cache store's lock connection: %w", app.DB.CacheStore, err)
	}
	lockClient, err := redisqueue.NewClient(lockConn)
	if err != nil {
		return err
	}
	o.closers = append(o.closers, lockClient.Close)
	single, ok := lockClient.(*redis.Client)
	if !ok {
		return fmt.Errorf("redisstore: the %s cache store takes its locks on the cluster %q; unique jobs' locks on a cluster are not supported", app.DB.CacheStore, lockName)
	}
	opts.Locks = map[string]jobqueue.LockStore{app.DB.CacheStore: redislock.NewWithClient(single, lockConn.Prefix+storePrefix)}
	state.Locks = redislock.NewWithClient(single, lockConn.Prefix)
	opts.StateStores = map[string]jobqueue.StateStore{app.DB.CacheStore: state}
	return nil
}

// durationLimiters are the DurationLimiters of the ...WithRedis job
// middleware on every Redis connection of the app's config (each client
// dials on first use).
func (o *Opened) durationLimiters(app App, opts *Options) error {
	opts.DurationLimiters = map[string]jobqueue.DurationLimiter{}
	for name := range app.Redis {
		if name == "client" || name == "options" || name == "clusters" {
			continue
		}
		conn, err := redisqueue.RedisConnection(name, app.Redis, app.Version)
		if err != nil {
			continue // not a connection Go reads: a job naming it goes back to PHP, saying so
		}
		client, err := redisqueue.NewClient(conn)
		if err != nil {
			return err
		}
		o.closers = append(o.closers, client.Close)
		opts.DurationLimiters[name] = redislimiter.New(client, conn.Prefix, nil)
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
