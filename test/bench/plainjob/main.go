// Command plainjob runs ONE plain no-op job (no middleware, unique lock,
// models, chain or batch) through the worker on one store and writes the
// coverage counters of that job's path: scripts/plainjob-funcs.sh builds
// it with -cover and counts the functions of the module that ran.
//
// The job is pushed delayed, the worker started, and the counters cleared
// while the job waits, so what the worker's start runs is not counted;
// they are written once the job has left the store (checked with clients
// of the module's dependencies, not of the module, so the check itself
// adds no function). What the worker runs while it waits for the job
// (its idle polls) is counted, as it would be between two jobs.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/coverage"
	"time"

	goredis "github.com/redis/go-redis/v9"
	_ "modernc.org/sqlite" // the driver the module's SQLite dialect registers; named here for the check

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/store/redis"
	"github.com/laraworker/laraworker/worker"
)

const class = `App\Jobs\PlainNoopJob`

func main() {
	storeName := flag.String("store", "sqlite", "sqlite or redis")
	redisAddr := flag.String("redis", "127.0.0.1:6379", "Redis address (the store uses its own key prefix and deletes nothing else)")
	out := flag.String("out", "", "directory the coverage meta-data and counters are written to (required)")
	delay := flag.Duration("delay", 3*time.Second, "how long the job waits (stores keep whole seconds); the counters are cleared after a third of it")
	flag.Parse()
	if *out == "" {
		fail(errors.New("-out is required"))
	}
	if err := run(*storeName, *redisAddr, *out, *delay); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "plainjob:", err)
	os.Exit(1)
}

func run(storeName, redisAddr, out string, delay time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "plainjob")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dbFile := filepath.Join(dir, "database.sqlite")
	q, err := database.Open(ctx, appconfig.Config{Driver: "sqlite", Database: dbFile, ConnectionName: storeName}, database.Options{})
	if err != nil {
		return err
	}
	defer q.Close()
	if err := q.CreateTables(ctx); err != nil {
		return err
	}
	var store jobqueue.Store = q
	left := func() (bool, error) { return sqliteEmpty(ctx, dbFile) }
	if storeName == "redis" {
		prefix := fmt.Sprintf("plainjob%d:", os.Getpid())
		rs, err := openRedis(ctx, q, redisAddr, prefix)
		if err != nil {
			return err
		}
		defer rs.Close()
		store = rs
		rc := goredis.NewClient(&goredis.Options{Addr: redisAddr})
		defer rc.Close()
		defer cleanRedis(rc, prefix)
		left = func() (bool, error) { return redisEmpty(ctx, rc, prefix) }
	} else if storeName != "sqlite" {
		return fmt.Errorf("-store %q: want sqlite or redis", storeName)
	}
	return measure(ctx, store, left, out, delay)
}

// measure pushes the job, runs the worker, and writes the counters of
// the job's path into out.
func measure(ctx context.Context, store jobqueue.Store, left func() (bool, error), out string, delay time.Duration) error {
	raw, err := payload.BuildObjectPayload(payload.NewCommand(class, nil, payload.Dispatch{}), payload.BuildOptions{})
	if err != nil {
		return err
	}
	if _, err := store.Push(ctx, jobqueue.PushItem{Payload: raw, Delay: delay}); err != nil {
		return err
	}
	reg := handlers.NewRegistry()
	reg.Handle(class, handlers.Noop())
	w, err := worker.New(store, reg, worker.Config{Sleep: 100 * time.Millisecond, MemoryMB: -1})
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(runCtx); close(done) }()
	defer func() { stop(); <-done }()
	time.Sleep(delay / 3)
	if err := coverage.ClearCounters(); err != nil {
		return fmt.Errorf("clear the counters (build with -cover -covermode=atomic): %w", err)
	}
	// The store keeps whole seconds: the job must still be waiting now,
	// or part of its path ran before the counters were cleared.
	if gone, err := left(); err != nil || gone {
		return fmt.Errorf("the job left the store before the counters were cleared (%v): use a longer -delay", err)
	}
	if err := waitLeft(ctx, left); err != nil {
		return err
	}
	// What follows the delete (the outcome's bookkeeping) runs within
	// microseconds of it; this leaves it time on a loaded machine.
	time.Sleep(100 * time.Millisecond)
	if err := coverage.WriteMetaDir(out); err != nil {
		return err
	}
	return coverage.WriteCountersDir(out)
}

func waitLeft(ctx context.Context, left func() (bool, error)) error {
	for {
		gone, err := left()
		if err != nil || gone {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.New("the job did not leave the store within a minute")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func openRedis(ctx context.Context, repo jobqueue.Repository, addr, prefix string) (*redis.Opened, error) {
	host, port := addr, "6379"
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			host, port = addr[:i], addr[i+1:]
			break
		}
	}
	app := redis.App{
		Connection: "redis", Version: "11.0",
		Queue: map[string]any{"driver": "redis", "connection": "default", "queue": "default", "retry_after": 90.0},
		Redis: map[string]any{"client": "phpredis", "options": map[string]any{"prefix": prefix},
			"default": map[string]any{"host": host, "port": port, "database": "0"}},
	}
	return redis.Open(ctx, app, redis.OpenOptions{Repository: repo, Horizon: redis.HorizonOff})
}

// sqliteEmpty says whether the jobs table is empty, read on a connection
// of its own.
func sqliteEmpty(ctx context.Context, file string) (bool, error) {
	db, err := sql.Open("sqlite", file)
	if err != nil {
		return false, err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, "select count(*) from jobs").Scan(&n)
	return n == 0, err
}

// redisEmpty says whether the queue's list, delayed and reserved sets are
// all gone (Redis deletes an empty key).
func redisEmpty(ctx context.Context, rc *goredis.Client, prefix string) (bool, error) {
	base := prefix + "queues:default"
	n, err := rc.Exists(ctx, base, base+":delayed", base+":reserved").Result()
	return n == 0, err
}

func cleanRedis(rc *goredis.Client, prefix string) {
	ctx := context.Background()
	keys, _ := rc.Keys(ctx, prefix+"*").Result()
	if len(keys) > 0 {
		rc.Del(ctx, keys...)
	}
}
