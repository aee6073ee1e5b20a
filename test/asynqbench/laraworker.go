package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/horizon"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/store/redis"
	"github.com/laraworker/laraworker/worker"
)

// benchClass is the class of every laraworker and PHP job: the payload
// is what `dispatch(new BenchNoopJob)` writes on a redis connection of
// a Laravel 8 app, and the PHP copy of the app has that class, with an
// empty handle().
const benchClass = `App\Jobs\BenchNoopJob`

// redisPrefix is the options.prefix of the Laravel 8 skeleton.
const redisPrefix = "laravel_database_"

// laraworkerContender is the library as an app embeds it: worker.New on
// a redis.Store (Laravel's keys and scripts on the private server;
// failed_jobs in a SQLite file no no-op job touches).
type laraworkerContender struct {
	srv *redisServer
	// horizon makes the store write Horizon's records (-horizon).
	horizon  bool
	db       *database.Queue
	store    *redis.Store
	q        *redisproto.Queue
	template []byte
	uuid     []byte
	// trips counts the requests of the store's client (round trips per job).
	trips *tripCounter
}

func newLaraworker(ctx context.Context, srv *redisServer, dir string, horizon bool) (*laraworkerContender, error) {
	db, err := database.Open(ctx, appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(dir, "outcomes.sqlite"),
		AppTimezone: "UTC", ConnectionName: "redis", JobsTable: "jobs", FailedTable: "failed_jobs", BatchesTable: "job_batches",
		DefaultQueue: "default", RetryAfter: 90}, database.Options{})
	if err != nil {
		return nil, err
	}
	l := &laraworkerContender{srv: srv, db: db, horizon: horizon}
	if l.q, l.store, err = l.open(ctx, nil); err != nil {
		db.Close()
		return nil, err
	}
	l.trips = &tripCounter{}
	l.q.Client().AddHook(l.trips)
	if err := l.store.CreateTables(ctx); err != nil {
		l.close()
		return nil, err
	}
	raw, err := payload.BuildObjectPayload(payload.NewCommand(benchClass, nil, payload.Dispatch{}), payload.BuildOptions{})
	if err != nil {
		l.close()
		return nil, err
	}
	p, err := payload.Parse(raw)
	if err != nil {
		l.close()
		return nil, err
	}
	l.template, l.uuid = raw, []byte(p.UUID)
	return l, nil
}

// open is a store on the private server with the Laravel 8 skeleton's
// redis connection (retry_after 90) and blockFor as block_for.
func (l *laraworkerContender) open(ctx context.Context, blockFor *time.Duration) (*redisproto.Queue, *redis.Store, error) {
	q, err := redisproto.Open(ctx, redisproto.Config{
		Connection: "redis", Queue: "default", RetryAfter: 90 * time.Second, BlockFor: blockFor,
		Redis: redisproto.RedisConfig{Name: "default", Client: "phpredis", Addrs: []string{l.srv.addr}, Prefix: redisPrefix},
	})
	if err != nil {
		return nil, nil, err
	}
	var opts redis.Options
	if l.horizon {
		cfg := horizon.Defaults()
		cfg.Prefix = "laravel_horizon:"
		opts.Horizon = horizon.New(q.Client(), "redis", cfg)
	}
	s, err := redis.New(q, l.db, opts)
	if err != nil {
		q.Close()
		return nil, nil, err
	}
	return q, s, nil
}

func (l *laraworkerContender) name() string { return "laraworker" }

func (l *laraworkerContender) close() {
	if l.q != nil {
		l.q.Close()
	}
	l.db.Close()
}

// payload is a job with a fresh uuid (the id and attempts the redis
// queue adds come with the push).
func (l *laraworkerContender) payload() ([]byte, string, error) {
	id, err := payload.NewUUID()
	if err != nil {
		return nil, "", err
	}
	return bytes.Replace(l.template, l.uuid, []byte(id), 1), id, nil
}

// load pushes n jobs in bulk (MULTI of pushes, as Queue::bulk).
func (l *laraworkerContender) load(ctx context.Context, n int) error {
	const perCall = 5000
	items := make([]jobqueue.PushItem, 0, perCall)
	for i := range n {
		raw, _, err := l.payload()
		if err != nil {
			return err
		}
		items = append(items, jobqueue.PushItem{Payload: raw})
		if len(items) == perCall || i == n-1 {
			if err := l.store.PushMany(ctx, items); err != nil {
				return err
			}
			items = items[:0]
		}
	}
	return nil
}

// work drains the queue with a no-op handler as `laraworker work
// --concurrency c --sleep 0 --stop-when-empty` does, and checks that
// every job was done.
// Run returns once the worker has stopped: nothing is left to stop.
func (l *laraworkerContender) work(ctx context.Context, n, c int) (func(), error) {
	reg := handlers.NewRegistry()
	reg.Handle(benchClass, handlers.Noop())
	w, err := worker.New(l.store, reg, worker.Config{Concurrency: c, StopWhenEmpty: true, Sleep: -1, MemoryMB: -1})
	if err != nil {
		return nil, err
	}
	w.Run(ctx)
	if s := w.Stats(); s.Done != int64(n) {
		return nil, fmt.Errorf("%d jobs done, want %d (stats %+v)", s.Done, n, s)
	}
	return func() {}, ctx.Err()
}

// left counts the jobs still in Redis (ready, delayed, reserved).
func (l *laraworkerContender) left(ctx context.Context) (int64, error) {
	return l.q.Size(ctx, "default")
}
