package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/store/redis"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

const pickupHelp = `Runs ONE worker inside this process (worker.New and Run at work's defaults:
--sleep 3s, --idle-poll 1s, --concurrency 10, the noop handler) on the
database queue the connection flags name, or with --redis on Laravel's redis
queue at that address (a prefix of its own, its keys deleted at the end; the
failed_jobs side in a temporary SQLite file). Before the worker starts, it
reads the process's CPU time (getrusage) over --idle while it does nothing
but one trivial round trip a second to the queue's server ("select 1",
Redis PING): the floor, the least a process of this Go runtime that polls
once a second spends on this machine. After --warm-up idle, it reads the
CPU time over --idle again with no job pushed: the worker's idle CPU.
Then it pushes jobs one by one at --rate for --duration, as Laravel
writes them (the database store's INSERT, the redis push script
with its :notify token), and reports from the start of each push to the
start of its handler: p50, p99 and max by nearest rank, and the 1-minute
load. The method is in docs/PERFORMANCE.md, "Pick-up latency".`

func pickupCommand() *cli.Command {
	return &cli.Command{
		Name:        "pickup",
		Usage:       "dispatch-to-start latency and idle CPU of one worker at the default settings",
		Description: pickupHelp,
		Flags: append(console.ConnectionFlags(),
			&cli.StringFlag{Name: "redis", Usage: "`HOST:PORT` of a Redis server: measure the redis queue there instead of the database queue"},
			&cli.IntFlag{Name: "rate", Value: 50, Usage: "jobs pushed per second"},
			&cli.DurationFlag{Name: "duration", Value: 30 * time.Second, Usage: "how long to push"},
			&cli.DurationFlag{Name: "idle", Value: 10 * time.Second, Usage: "the idle window whose CPU is measured"},
			&cli.DurationFlag{Name: "warm-up", Value: 5 * time.Second, Usage: "idle time before the idle window (the poll backs off)"},
			&cli.DurationFlag{Name: "sleep", Value: worker.DefaultSleep, Usage: "the worker's --sleep"},
			&cli.DurationFlag{Name: "idle-poll", Value: worker.DefaultIdlePoll, Usage: "the worker's --idle-poll (databases; 0: up to --sleep, the old idle rate)"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as one JSON object (durations in ms), as the headline block records it"},
		),
		Action: console.NoArgs(runPickup),
	}
}

// pickupReport is what the bench prints.
type pickupReport struct {
	Queue            string
	Jobs             int
	P50, P99, Max    time.Duration
	IdleCPUPerSecond time.Duration
	IdleCorePercent  float64
	// FloorCPUPerSecond is the process's CPU with no worker, one trivial
	// round trip a second (floorCPU).
	FloorCPUPerSecond      time.Duration
	LoadBefore, LoadAfter  float64
	Rate                   int
	PushedFor, IdleWindow  time.Duration
	Sleep, IdlePoll        time.Duration
	MissingAfterDrainLimit int
}

func runPickup(c *cli.Context) error {
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := openPickup(ctx, c)
	if err != nil {
		return cli.Exit("bench pickup: "+err.Error(), 1)
	}
	defer p.close()
	rep, err := p.run(ctx, c)
	if err != nil {
		return cli.Exit("bench pickup: "+err.Error(), 1)
	}
	if c.Bool("json") {
		return rep.printJSON(c.App.Writer)
	}
	rep.print(c.App.Writer)
	return nil
}

// pickup is one measured worker and the queue it runs on.
type pickup struct {
	store jobqueue.Store
	// roundTrip is one trivial request to the queue's server.
	roundTrip func(context.Context) error
	queue     string
	closer    []func()
	jobs      jobTemplate

	mu      sync.Mutex
	pushed  map[string]time.Time
	latency []time.Duration
	started chan struct{}
}

func openPickup(ctx context.Context, c *cli.Context) (*pickup, error) {
	jobs, err := newJobTemplate()
	if err != nil {
		return nil, err
	}
	p := &pickup{jobs: jobs, pushed: map[string]time.Time{}, started: make(chan struct{}, 1<<16)}
	if addr := c.String("redis"); addr != "" {
		return p, p.openRedis(ctx, addr)
	}
	cfg, err := loadBenchConfig(c)
	if err != nil {
		return nil, err
	}
	q, err := database.Open(ctx, cfg, database.Options{})
	if err != nil {
		return nil, err
	}
	p.closer = append(p.closer, func() { _ = q.DropTables(context.Background()); q.Close() })
	_ = q.DropTables(ctx)
	p.store, p.queue = q, cfg.Driver+" (table "+cfg.JobsTable+")"
	p.roundTrip = func(ctx context.Context) error {
		var one int
		return q.DB().QueryRowContext(ctx, "select 1").Scan(&one)
	}
	return p, q.CreateTables(ctx)
}

// openRedis is a redis store at addr with a prefix of its own and the
// failed_jobs side in a temporary SQLite file.
func (p *pickup) openRedis(ctx context.Context, addr string) error {
	dir, err := os.MkdirTemp("", "laraworker-pickup-")
	if err != nil {
		return err
	}
	p.closer = append(p.closer, func() { os.RemoveAll(dir) })
	db, err := database.Open(ctx, appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(dir, "outcomes.sqlite"),
		AppTimezone: "UTC", ConnectionName: "redis", JobsTable: "jobs", FailedTable: "failed_jobs", BatchesTable: "job_batches",
		DefaultQueue: "default", RetryAfter: 90}, database.Options{})
	if err != nil {
		return err
	}
	p.closer = append(p.closer, func() { db.Close() })
	prefix := fmt.Sprintf("laraworker_pickup_%d_", os.Getpid())
	q, err := redisproto.Open(ctx, redisproto.Config{Connection: "redis", Queue: "default", RetryAfter: 90 * time.Second,
		Redis: redisproto.RedisConfig{Name: "default", Client: "phpredis", Addrs: []string{addr}, Prefix: prefix}})
	if err != nil {
		return err
	}
	p.closer = append(p.closer, func() {
		k := q.Config().Keys("default")
		_ = q.Client().Del(context.Background(), k.Ready, k.Delayed, k.Reserved, k.Notify).Err()
		q.Close()
	})
	s, err := redis.New(q, db, redis.Options{})
	if err != nil {
		return err
	}
	p.store, p.queue = s, "redis "+addr+" (prefix "+prefix+")"
	p.roundTrip = func(ctx context.Context) error { return q.Client().Ping(ctx).Err() }
	return s.CreateTables(ctx)
}

func (p *pickup) close() {
	for _, f := range slices.Backward(p.closer) {
		f()
	}
}

func (p *pickup) registry() *handlers.Registry {
	reg := handlers.NewRegistry()
	reg.HandleFunc(benchClass, func(_ context.Context, job *handlers.Job) error {
		now := time.Now()
		p.mu.Lock()
		if at, ok := p.pushed[job.UUID]; ok {
			p.latency = append(p.latency, now.Sub(at))
			delete(p.pushed, job.UUID)
		}
		p.mu.Unlock()
		p.started <- struct{}{}
		return nil
	})
	return reg
}

func (p *pickup) run(ctx context.Context, c *cli.Context) (*pickupReport, error) {
	rate, duration, idle := c.Int("rate"), c.Duration("duration"), c.Duration("idle")
	if rate <= 0 || duration <= 0 || idle <= 0 {
		return nil, errors.New("--rate, --duration and --idle must be positive")
	}
	rep := &pickupReport{Queue: p.queue, Rate: rate, PushedFor: duration, IdleWindow: idle, Sleep: c.Duration("sleep"), IdlePoll: c.Duration("idle-poll"), LoadBefore: load1()}
	floor, err := p.floorCPU(ctx, idle)
	if err != nil {
		return nil, err
	}
	rep.FloorCPUPerSecond = floor
	w, err := worker.New(p.store, p.registry(), worker.Config{Name: "pickup", Queues: []string{"default"},
		Sleep: c.Duration("sleep"), IdlePoll: noneIfZero(c.Duration("idle-poll")), MemoryMB: -1,
		Logger: zerolog.New(os.Stderr).Level(zerolog.WarnLevel).With().Timestamp().Logger()})
	if err != nil {
		return nil, err
	}
	runCtx, stopWorker := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { w.Run(runCtx); close(stopped) }()
	defer func() { stopWorker(); <-stopped }()

	if !sleepCtx(ctx, c.Duration("warm-up")) {
		return nil, ctx.Err()
	}
	cpu0, t0 := processCPU(), time.Now()
	if !sleepCtx(ctx, idle) {
		return nil, ctx.Err()
	}
	rep.IdleCPUPerSecond = cpuPerSecondSince(cpu0, t0)
	rep.IdleCorePercent = 100 * float64(rep.IdleCPUPerSecond) / float64(time.Second)

	n, err := p.produce(ctx, rate, duration)
	if err != nil {
		return nil, err
	}
	limit := time.After(10*time.Second + c.Duration("sleep"))
	for got := 0; got < n; got++ {
		select {
		case <-p.started:
		case <-limit:
			rep.MissingAfterDrainLimit = n - got
			got = n
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	rep.LoadAfter = load1()
	p.mu.Lock()
	lat := slices.Clone(p.latency)
	p.mu.Unlock()
	slices.Sort(lat)
	rep.Jobs = len(lat)
	if len(lat) > 0 {
		rep.P50, rep.P99, rep.Max = nearestRank(lat, 0.50), nearestRank(lat, 0.99), lat[len(lat)-1]
	}
	return rep, nil
}

// floorEvery is the floor's round-trip interval: the databases' idle
// poll at the defaults (--idle-poll 1s).
const floorEvery = time.Second

// floorCPU is this process's CPU per second over d, with no worker
// running, while one goroutine does one trivial round trip to the queue's
// server every floorEvery: what a Go process that polls that server once
// a second cannot spend less than on this machine (the runtime's and the
// kernel's cost of each wake-up, which a virtual machine makes dear).
func (p *pickup) floorCPU(ctx context.Context, d time.Duration) (time.Duration, error) {
	if err := p.roundTrip(ctx); err != nil { // the connection is made
		return 0, err
	}
	tick := time.NewTicker(floorEvery)
	defer tick.Stop()
	cpu0, t0 := processCPU(), time.Now()
	for end := t0.Add(d); time.Now().Before(end); {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
			if err := p.roundTrip(ctx); err != nil {
				return 0, err
			}
		}
	}
	return cpuPerSecondSince(cpu0, t0), nil
}

// cpuPerSecondSince is the process's CPU time since cpu0 (processCPU at
// t0) per second of wall time since t0.
func cpuPerSecondSince(cpu0 time.Duration, t0 time.Time) time.Duration {
	return time.Duration(float64(processCPU()-cpu0) / time.Since(t0).Seconds())
}

// produce pushes one job every 1/rate for duration, each timed from just
// before its push.
func (p *pickup) produce(ctx context.Context, rate int, duration time.Duration) (int, error) {
	every := time.Second / time.Duration(rate)
	start := time.Now()
	n := 0
	for next := start; next.Sub(start) < duration; next = next.Add(every) {
		if !sleepCtx(ctx, time.Until(next)) {
			return n, ctx.Err()
		}
		raw, err := p.jobs.payload()
		if err != nil {
			return n, err
		}
		pl, err := payload.Parse(raw)
		if err != nil {
			return n, err
		}
		p.mu.Lock()
		p.pushed[pl.UUID] = time.Now()
		p.mu.Unlock()
		if _, err := p.store.Push(ctx, jobqueue.PushItem{Queue: "default", Payload: raw}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (r *pickupReport) print(out io.Writer) {
	fmt.Fprintf(out, "pick-up latency, one worker (--sleep %s, --idle-poll %s), %s\n", r.Sleep, r.IdlePoll, r.Queue)
	fmt.Fprintf(out, "  idle CPU over %s: %.3f ms per second (%.3f%% of a core); floor, one round trip a second and no worker: %.3f ms per second\n",
		r.IdleWindow, millis(r.IdleCPUPerSecond), r.IdleCorePercent, millis(r.FloorCPUPerSecond))
	fmt.Fprintf(out, "  %d jobs at %d/s for %s, push to handler start: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
		r.Jobs, r.Rate, r.PushedFor, millis(r.P50), millis(r.P99), millis(r.Max))
	if r.MissingAfterDrainLimit > 0 {
		fmt.Fprintf(out, "  %d jobs had not started when the bench gave up\n", r.MissingAfterDrainLimit)
	}
	fmt.Fprintf(out, "  load (1 min) before %.2f, after %.2f\n", r.LoadBefore, r.LoadAfter)
}

// printJSON writes the report as the headline block reads it: one object,
// durations in milliseconds.
func (r *pickupReport) printJSON(out io.Writer) error {
	return json.NewEncoder(out).Encode(map[string]any{
		"queue": r.Queue, "jobs": r.Jobs, "rate": r.Rate, "pushed_for_s": r.PushedFor.Seconds(),
		"p50_ms": millis(r.P50), "p99_ms": millis(r.P99), "max_ms": millis(r.Max),
		"idle_cpu_ms_per_s": millis(r.IdleCPUPerSecond), "idle_core_percent": r.IdleCorePercent, "floor_cpu_ms_per_s": millis(r.FloorCPUPerSecond),
		"sleep_s": r.Sleep.Seconds(), "idle_poll_s": r.IdlePoll.Seconds(), "missing": r.MissingAfterDrainLimit,
		"load_before": r.LoadBefore, "load_after": r.LoadAfter,
	})
}

// noneIfZero maps a flag's 0 ("none") to the Config's negative.
func noneIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// processCPU is this process's user + system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sleepCtx sleeps d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// millis is d in milliseconds.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func nearestRank(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
