// Command relworker is `laraworker` (the same CLI, console.Run) with Go
// handlers registered in-process for the reliability tests. Each handler
// records its run as a job_runs row, the way the Laravel test app's
// RunRecorder does (one plain insert, no transaction), so a test counts runs
// by Go and by PHP in one table.
//
// The worker column is "go:<pid>", so a test that SIGKILLs workers can tell
// which process ran what. RELWORKER_SLEEP (a Go duration) makes NoopJob
// take that long, so kills land while jobs run.
//
// Handlers:
//
//	App\Jobs\NoopJob             record, sleep RELWORKER_SLEEP
//	App\Jobs\SleepJob            record phase "start", sleep $seconds (or
//	                             RELWORKER_SLEEP_SECONDS), record "end";
//	                             then, with RELWORKER_SLEEP_THEN=release,
//	                             ask for a release (the frozen-worker
//	                             job), with release-first only on attempt 1,
//	                             or fail with RELWORKER_SLEEP_THEN=fail; with
//	                             RELWORKER_SLEEP_GATE=<file> it waits after
//	                             recording "end" until that file exists
//	App\Jobs\BatchedSleepJob      as SleepJob (a SleepJob that can be in a batch)
//	LaraWorker\Reliability\Panic panic with the loaded configuration in scope
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

func main() {
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\NoopJob`, noop)
	reg.HandleFunc(`App\Jobs\SleepJob`, sleepJob)
	reg.HandleFunc(`App\Jobs\BatchedSleepJob`, sleepJob)
	reg.HandleFunc(`LaraWorker\Reliability\Panic`, panicky)
	os.Exit(console.Run(console.New(reg, console.Options{}), os.Args))
}

// recorder is the handlers' own connection to the app database, opened on
// first use from the same .env the worker reads (LARAWORKER_ENV).
var recorder struct {
	once sync.Once
	db   *sql.DB
	q    *database.Queue
	err  error
}

func config() (appconfig.Config, error) {
	cfg, _, err := appconfig.Load(context.Background(), appconfig.Options{EnvOnly: true, EnvFile: os.Getenv("LARAWORKER_ENV")})
	return cfg, err
}

func recordDB(ctx context.Context) (*database.Queue, error) {
	recorder.once.Do(func() {
		cfg, err := config()
		if err != nil {
			recorder.err = err
			return
		}
		recorder.q, recorder.err = database.Open(ctx, cfg, database.Options{})
	})
	return recorder.q, recorder.err
}

// record inserts one job_runs row with RunRecorder's columns.
func record(ctx context.Context, job *handlers.Job, result map[string]any) error {
	q, err := recordDB(ctx)
	if err != nil {
		return err
	}
	res, err := json.Marshal(result)
	if err != nil {
		return err
	}
	_, err = q.DB().ExecContext(ctx, q.Dialect().Rebind(
		`insert into job_runs (uuid, class, attempt, worker, result, created_at) values (?, ?, ?, ?, ?, ?)`),
		job.UUID, job.DisplayName, job.Attempts, "go:"+strconv.Itoa(os.Getpid()), string(res), time.Now().UTC().Format(time.DateTime))
	return err
}

func noop(ctx context.Context, job *handlers.Job) error {
	if err := record(ctx, job, map[string]any{}); err != nil {
		return err
	}
	if d, err := time.ParseDuration(os.Getenv("RELWORKER_SLEEP")); err == nil && d > 0 {
		time.Sleep(d)
	}
	return nil
}

// sleepJob mirrors App\Jobs\SleepJob::handle.
func sleepJob(ctx context.Context, job *handlers.Job) error {
	var cmd struct {
		Seconds int64 `php:"seconds"`
	}
	if err := job.Decode(&cmd); err != nil {
		return err
	}
	if s, err := strconv.ParseInt(os.Getenv("RELWORKER_SLEEP_SECONDS"), 10, 64); err == nil {
		cmd.Seconds = s
	}
	if err := record(ctx, job, map[string]any{"seconds": cmd.Seconds, "phase": "start"}); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(cmd.Seconds) * time.Second):
	}
	if err := record(ctx, job, map[string]any{"seconds": cmd.Seconds, "phase": "end"}); err != nil {
		return err
	}
	if gate := os.Getenv("RELWORKER_SLEEP_GATE"); gate != "" {
		// Held at its end until the test has frozen the process and made
		// the file: what the handler decided then reaches the worker as soon
		// as the process is continued. (A process cannot stop itself at an
		// exact point: its other threads run on until the stop reaches
		// them.)
		for {
			if _, err := os.Stat(gate); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	switch then := os.Getenv("RELWORKER_SLEEP_THEN"); {
	case then == "release", then == "release-first" && job.Attempts == 1:
		job.Release(0)
	case then == "fail":
		return errors.New("SleepJob failed after its sleep, as RELWORKER_SLEEP_THEN=fail asks")
	}
	return nil
}

// panicky panics with the whole configuration, secrets included, in the
// panic value: a careless handler the worker must not turn into a leak.
func panicky(context.Context, *handlers.Job) error {
	cfg, err := config()
	if err != nil {
		return err
	}
	panic(fmt.Sprintf("handler gave up with config %+v / %v / %#v", cfg, cfg, cfg))
}
