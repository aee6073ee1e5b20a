package sqs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/internal/sqsproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
)

// App is what Open reads from a Laravel app whose queue connection has
// driver "sqs".
type App struct {
	// Connection is the queue connection's name (e.g. "sqs").
	Connection string
	// Queue is config('queue.connections.<Connection>') (credentials
	// included: never log it).
	Queue map[string]any
	// Vapor: laravel/vapor-core serves the connection.
	Vapor bool
}

// OpenOptions are Open's settings beyond the app's.
type OpenOptions struct {
	// Repository is the app's database side (required): failed_jobs,
	// job_batches, the bridge's hooks queue and the cache stores; package
	// store/database's Queue opened on the app's database under
	// App.Connection. Open does not close it.
	Repository jobqueue.Repository
	Logger     zerolog.Logger
	Encrypter  *payload.Encrypter
	// Wait is Options.Wait.
	Wait time.Duration
}

// Opened is a store Open connected: Close closes what it opened.
type Opened struct {
	*Store
	closers []func() error
}

// Close waits for the store's long polls (not the repository).
func (o *Opened) Close() error {
	var errs []error
	for i := len(o.closers) - 1; i >= 0; i-- {
		errs = append(errs, o.closers[i]())
	}
	return errors.Join(errs...)
}

// Open builds the app's SQS queue connection on the repository, and
// reads the default queue's attributes (a wrong prefix, region or
// credentials fail here). A connection whose overflow (13.9+) keeps
// payloads in a cache store Go does not share is refused: its pointer
// bodies could not be read.
func Open(ctx context.Context, app App, opts OpenOptions) (*Opened, error) {
	if opts.Repository == nil {
		return nil, errors.New("sqsstore: Open needs the app's database side (OpenOptions.Repository)")
	}
	cfg, err := sqsproto.FromLaravel(app.Connection, app.Queue, sqsproto.LaravelOptions{Vapor: app.Vapor})
	if err != nil {
		return nil, err
	}
	q, err := sqsproto.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := checkOverflow(cfg.Overflow, opts.Repository); err != nil {
		return nil, err
	}
	st, err := New(ctx, q, opts.Repository, Options{Logger: opts.Logger, Encrypter: opts.Encrypter, Wait: opts.Wait})
	if err != nil {
		return nil, err
	}
	return &Opened{Store: st, closers: []func() error{st.Close}}, nil
}

// checkOverflow refuses an overflow store Go cannot read.
func checkOverflow(ov sqsproto.Overflow, db jobqueue.Repository) error {
	if !ov.Enabled {
		return nil
	}
	if ov.Store != "" && ov.Store != db.DefaultCacheStore() {
		return fmt.Errorf("sqsstore: the connection's overflow keeps large payloads in cache store %q, and laraworker reads only the app's default cache store (%q): pointer bodies could not be read; set overflow.store to null or the default store", ov.Store, db.DefaultCacheStore())
	}
	if db.SharedCache() == nil {
		return fmt.Errorf("sqsstore: the connection's overflow keeps large payloads in the app's default cache store (%q), which laraworker does not share (it reads a database or redis store): pointer bodies could not be read", db.DefaultCacheStore())
	}
	return nil
}
