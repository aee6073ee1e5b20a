package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/dbqueue"
	"github.com/laraworker/laraworker/redisqueue"
	"github.com/laraworker/laraworker/redisshared"
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
	shared, err := redisshared.Open(redisshared.App{Redis: app.Redis, CacheStore: app.CacheStore,
		StoreName: app.DB.CacheStore, CachePrefix: app.DB.CachePrefix, Version: app.Version})
	if err != nil {
		return fail(err)
	}
	o.closers = append(o.closers, shared.Close)
	storeOpts.Cache, storeOpts.Locks = shared.Cache, shared.Locks
	storeOpts.StateStores, storeOpts.DurationLimiters = shared.StateStores, shared.DurationLimiters
	if o.Store, err = New(q, db, storeOpts); err != nil {
		return fail(err)
	}
	return o, nil
}
