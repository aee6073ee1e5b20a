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
//
// With -warm, a first job of the same class is pushed ready and run
// before the counters are cleared: what the measured job then runs is a
// job's path in a worker that has run one before (its statements
// rendered, its caches filled), not the first job's after a start.
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
	warm := flag.Bool("warm", false, "run one job of the class before the measured one, and clear the counters once it has left")
	flag.Parse()
	if *out == "" {
		fail(errors.New("-out is required"))
	}
	if err := run(*storeName, *redisAddr, *out, *delay, *warm); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "plainjob:", err)
	os.Exit(1)
}

func run(storeName, redisAddr, out string, delay time.Duration, warm bool) error {
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
	count := func() (int, error) { return sqliteJobs(ctx, dbFile) }
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
		count = func() (int, error) { return redisJobs(ctx, rc, prefix) }
	} else if storeName != "sqlite" {
		return fmt.Errorf("-store %q: want sqlite or redis", storeName)
	}
	return measure(ctx, store, count, out, delay, warm)
}

// measure pushes the job (after a warm-up job with warm), runs the
// worker, and writes the counters of the job's path into out. count is
// how many jobs the store holds.
func measure(ctx context.Context, store jobqueue.Store, count func() (int, error), out string, delay time.Duration, warm bool) error {
	if warm {
		if err := push(ctx, store, 0); err != nil {
			return err
		}
	}
	if err := push(ctx, store, delay); err != nil {
		return err
	}
	pushed := time.Now()
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
	if warm {
		if err := waitJobs(ctx, count, 1); err != nil {
			return fmt.Errorf("the warm-up job: %w", err)
		}
		// Its outcome's bookkeeping follows the delete within microseconds.
		time.Sleep(100 * time.Millisecond)
	} else {
		time.Sleep(delay / 3)
	}
	if err := coverage.ClearCounters(); err != nil {
		return fmt.Errorf("clear the counters (build with -cover -covermode=atomic): %w", err)
	}
	// The store keeps whole seconds: the job must still be waiting now,
	// or part of its path ran before the counters were cleared.
	if n, err := count(); err != nil || n == 0 || time.Since(pushed) > delay-time.Second {
		return fmt.Errorf("the job may have started before the counters were cleared (%v): use a longer -delay", err)
	}
	if err := waitJobs(ctx, count, 0); err != nil {
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

// push pushes one plain job of class, delayed by delay.
func push(ctx context.Context, store jobqueue.Store, delay time.Duration) error {
	raw, err := payload.BuildObjectPayload(payload.NewCommand(class, nil, payload.Dispatch{}), payload.BuildOptions{})
	if err != nil {
		return err
	}
	_, err = store.Push(ctx, jobqueue.PushItem{Payload: raw, Delay: delay})
	return err
}

// waitJobs waits until the store holds want jobs.
func waitJobs(ctx context.Context, count func() (int, error), want int) error {
	for {
		n, err := count()
		if err != nil || n == want {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the store still held %d jobs, want %d, after a minute", n, want)
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

// sqliteJobs counts the jobs table's rows, read on a connection of its
// own.
func sqliteJobs(ctx context.Context, file string) (int, error) {
	db, err := sql.Open("sqlite", file)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, "select count(*) from jobs").Scan(&n)
	return n, err
}

// redisJobs counts the jobs of the queue's list, delayed and reserved
// sets.
func redisJobs(ctx context.Context, rc *goredis.Client, prefix string) (int, error) {
	base := prefix + "queues:default"
	pipe := rc.Pipeline()
	ready, delayed, reserved := pipe.LLen(ctx, base), pipe.ZCard(ctx, base+":delayed"), pipe.ZCard(ctx, base+":reserved")
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	return int(ready.Val() + delayed.Val() + reserved.Val()), nil
}

func cleanRedis(rc *goredis.Client, prefix string) {
	ctx := context.Background()
	keys, _ := rc.Keys(ctx, prefix+"*").Result()
	if len(keys) > 0 {
		rc.Del(ctx, keys...)
	}
}
