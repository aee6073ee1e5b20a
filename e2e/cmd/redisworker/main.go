// Command redisworker runs worker.New on a redisstore.Store opened on the
// Laravel test app's redis queue connection, read from the app as PHP
// resolves it: the e2e tests' Go worker on Redis until `laraworker work`
// serves redis connections. Every class named by --class runs the e2e
// recorder (LARAWORKER_E2E_RECORDER), so runs land in job_runs as for
// `laraworker work --route`; RECORDER_FAIL_WHEN (NAME=V) makes it fail
// for matching commands, RECORDER_FAIL=1 for all, RECORDER_RELEASE=1
// makes it release every job.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/payload"
	"github.com/laraworker/laraworker/redisstore"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
)

// readApp prints what redisstore.Open needs, from inside the booted app.
const readApp = `require 'bootstrap/autoload.php'; $app = require 'bootstrap/app.php';
$app->make(Illuminate\Contracts\Console\Kernel::class)->bootstrap();
$conn = $argv[1];
echo json_encode([
    'version' => $app->version(),
    'queue' => config('queue.connections.'.$conn),
    'redis' => config('database.redis'),
    'cache_store' => config('cache.stores.'.config('cache.default')),
    'horizon' => class_exists('Laravel\Horizon\Horizon'),
]);`

func main() {
	connection := flag.String("connection", "redis", "the queue connection")
	classes := flag.String("class", "", "comma-separated classes the recorder runs")
	queues := flag.String("queue", "", "queues in priority order")
	tries := flag.Int("tries", 0, "--tries")
	backoff := flag.String("backoff", "", "--backoff")
	sleep := flag.Duration("sleep", 200*time.Millisecond, "--sleep")
	stopWhenEmpty := flag.Bool("stop-when-empty", false, "--stop-when-empty")
	maxTime := flag.Duration("max-time", 0, "--max-time")
	maxJobs := flag.Int("max-jobs", 0, "--max-jobs")
	concurrency := flag.Int("concurrency", 0, "jobs at once")
	flag.Parse()
	log := zerolog.New(os.Stderr).With().Timestamp().Logger()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	app, err := loadApp(ctx, *connection)
	if err != nil {
		fatal(err)
	}
	store, err := redisstore.Open(ctx, app, redisstore.OpenOptions{Logger: log})
	if err != nil {
		fatal(err)
	}
	defer store.Close()

	recorder := []string{os.Getenv("LARAWORKER_E2E_RECORDER"), "-env", os.Getenv("LARAWORKER_ENV")}
	switch {
	case os.Getenv("RECORDER_FAIL_WHEN") != "":
		recorder = append(recorder, "-fail", "failing as asked", "-when", os.Getenv("RECORDER_FAIL_WHEN"))
	case os.Getenv("RECORDER_FAIL") != "":
		recorder = append(recorder, "-fail", "failing as asked")
	case os.Getenv("RECORDER_RELEASE") != "":
		recorder = append(recorder, "-release")
	}
	run := handlers.Exec(recorder, handlers.ExecOptions{})
	reg := handlers.NewRegistry()
	for _, class := range strings.Split(*classes, ",") {
		if class == "" {
			continue
		}
		if class == `App\Jobs\UniqueJob` {
			reg.Handle(class, run, handlers.ShouldBeUnique(handlers.UniqueIDProperty("productId")))
			continue
		}
		reg.Handle(class, run)
	}
	var enc *payload.Encrypter
	if key, err := payload.ParseKey(app.DB.AppKey.Reveal()); err == nil {
		enc, _ = payload.NewEncrypter(key, app.DB.AppCipher)
	}
	w, err := worker.New(store, reg, worker.Config{
		Queues: worker.ParseQueues(*queues), Tries: *tries, Backoff: *backoff, Sleep: *sleep,
		StopWhenEmpty: *stopWhenEmpty, MaxTime: *maxTime, MaxJobs: *maxJobs, Concurrency: *concurrency,
		LaravelVersion: app.Version, Logger: log, Encrypter: enc, MemoryMB: -1,
	})
	if err != nil {
		fatal(err)
	}
	reason := w.Run(ctx)
	st := w.Stats()
	fmt.Printf("stopped: %s claimed=%d done=%d failed=%d released=%d returned=%d lost=%d\n",
		reason, st.Claimed, st.Done, st.Failed, st.Released, st.Returned, st.Lost)
	os.Exit(worker.ExitCode(reason, st))
}

// loadApp reads the app's redis queue connection with its PHP and its
// database from its .env (LARAWORKER_ENV).
func loadApp(ctx context.Context, connection string) (redisstore.App, error) {
	cmd := exec.CommandContext(ctx, "php", "-r", readApp, connection)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return redisstore.App{}, fmt.Errorf("reading the app's config with php: %w", err)
	}
	var conf struct {
		Version    string         `json:"version"`
		Queue      map[string]any `json:"queue"`
		Redis      map[string]any `json:"redis"`
		CacheStore map[string]any `json:"cache_store"`
		Horizon    bool           `json:"horizon"`
	}
	if err := json.Unmarshal(out, &conf); err != nil {
		return redisstore.App{}, fmt.Errorf("the app's config: %w", err)
	}
	db, err := appconfig.LoadConfig(appconfig.LoadOptions{EnvFile: os.Getenv("LARAWORKER_ENV")})
	if err != nil {
		return redisstore.App{}, err
	}
	return redisstore.App{Connection: connection, Queue: conf.Queue, Redis: conf.Redis, CacheStore: conf.CacheStore,
		Version: conf.Version, Horizon: conf.Horizon, DB: db}, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "redisworker:", err)
	os.Exit(1)
}
