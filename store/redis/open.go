package redis

import (
	"context"
	"errors"
	"fmt"

	"github.com/laraworker/laraworker/internal/cache/redisshared"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/rs/zerolog"
)

// App is what Open reads from a Laravel app whose queue connection has
// driver "redis": the config arrays as PHP's config() returns them
// (decoded from JSON).
type App struct {
	// Connection is the queue connection's name (e.g. "redis").
	Connection string
	// Queue is config('queue.connections.<Connection>'), Redis is
	// config('database.redis') (passwords included: never log it).
	Queue, Redis map[string]any
	// CacheStore is config('cache.stores.<default store>'): when its
	// driver is "redis", the queue:restart signal, the maxExceptions
	// counters and the default store's locks are read in Redis.
	// CacheStoreName and CachePrefix are the default store's name
	// (config('cache.default')) and the cache prefix.
	CacheStore                  map[string]any
	CacheStoreName, CachePrefix string
	// Version is the app's Laravel version; Horizon is set when
	// laravel/horizon is installed (its connector reads the config).
	Version string
	Horizon bool
	// HorizonConfig is config('horizon') (prefix, use, trim, silenced)
	// when Horizon is installed; nil is Horizon's defaults.
	HorizonConfig map[string]any
}

// OpenOptions are Open's settings beyond the app's.
type OpenOptions struct {
	// Repository is the app's database side (required): failed_jobs,
	// job_batches, the bridge's hooks queue and, for a "database" cache
	// store, the cache tables; package store/database's Queue opened on
	// the app's database under App.Connection. Open does not close it.
	Repository jobqueue.Repository
	Logger     zerolog.Logger
	// Horizon says whether the store writes Horizon's records (package
	// internal/horizon): HorizonAuto (the zero value) when the app has
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

// Close closes the Redis connections Open made (not the repository).
func (o *Opened) Close() error {
	var errs []error
	for i := len(o.closers) - 1; i >= 0; i-- {
		errs = append(errs, o.closers[i]())
	}
	return errors.Join(errs...)
}

// Open connects to the app's Redis queue connection as the app's config
// says, and builds the store on it and the repository.
func Open(ctx context.Context, app App, opts OpenOptions) (*Opened, error) {
	if opts.Repository == nil {
		return nil, errors.New("redisstore: Open needs the app's database side (OpenOptions.Repository)")
	}
	o := &Opened{}
	fail := func(err error) (*Opened, error) {
		o.Close()
		return nil, err
	}
	cfg, err := redisproto.FromLaravel(app.Connection, app.Queue, app.Redis, redisproto.LaravelOptions{Version: app.Version, Horizon: app.Horizon})
	if err != nil {
		return nil, err
	}
	q, err := redisproto.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	o.closers = append(o.closers, q.Close)
	storeOpts := Options{Logger: opts.Logger}
	if opts.Horizon == HorizonOn || (opts.Horizon == HorizonAuto && app.Horizon) {
		if storeOpts.Horizon, err = o.horizonRecorder(app); err != nil {
			return fail(err)
		}
	}
	shared, err := redisshared.Open(redisshared.App{Redis: app.Redis, CacheStore: app.CacheStore,
		StoreName: app.CacheStoreName, CachePrefix: app.CachePrefix, Version: app.Version})
	if err != nil {
		return fail(err)
	}
	o.closers = append(o.closers, shared.Close)
	storeOpts.Cache, storeOpts.Locks = shared.Cache, shared.Locks
	storeOpts.StateStores, storeOpts.DurationLimiters = shared.StateStores, shared.DurationLimiters
	if o.Store, err = New(q, opts.Repository, storeOpts); err != nil {
		return fail(err)
	}
	return o, nil
}
