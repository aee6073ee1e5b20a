package console

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/internal/horizon"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

// This file is work's side of Laravel Horizon beyond the job records:
// the worker listed in Horizon's masters and supervisors (so the
// dashboard counts it and horizon:pause, horizon:continue and
// horizon:terminate reach it), and --horizon-supervisor, the settings of
// one supervisor of config('horizon.environments'). docs/HORIZON.md.

// horizonFlags are work's Horizon flags beyond --horizon.
type horizonFlags struct {
	// supervisor is --horizon-supervisor, environment
	// --horizon-environment.
	supervisor, environment string
	// register is --horizon-register.
	register bool
	// explicit are the worker flags given on the command line, which win
	// over the supervisor's settings.
	explicit map[string]bool
}

// supervisorFlags are the flags a supervisor's settings fill.
var supervisorFlags = []string{"queue", "tries", "timeout", "backoff", "memory", "concurrency", "sleep", "rest", "max-jobs", "max-time", "name"}

func horizonCLIFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "horizon-supervisor", EnvVars: []string{"LARAWORKER_HORIZON_SUPERVISOR"}, Usage: "`NAME` of a supervisor of the app's config('horizon.environments') (with horizon.defaults) whose settings the worker takes: queue, tries, timeout, backoff, memory, maxProcesses (as --concurrency), sleep, rest, maxJobs, maxTime, workersName (as --name); flags given on the command line win. The worker is listed in Horizon under this supervisor's name"},
		&cli.StringFlag{Name: "horizon-environment", EnvVars: []string{"LARAWORKER_HORIZON_ENVIRONMENT"}, Usage: "the `ENV` whose supervisors --horizon-supervisor reads, as `php artisan horizon --environment` (default: config('horizon.env'), else APP_ENV)"},
		&cli.BoolFlag{Name: "horizon-register", Value: true, Usage: "with Horizon's records on (--horizon), list this worker in Horizon's masters and supervisors, so the dashboard shows it and horizon:pause, horizon:continue and horizon:terminate (on this host) reach it; --horizon-register=false: job records only"},
	}
}

func readHorizonFlags(c *cli.Context) horizonFlags {
	h := horizonFlags{supervisor: c.String("horizon-supervisor"), environment: c.String("horizon-environment"),
		register: c.Bool("horizon-register"), explicit: map[string]bool{}}
	for _, name := range supervisorFlags {
		h.explicit[name] = c.IsSet(name)
	}
	return h
}

// horizonEnvironment is the environment whose supervisors are read:
// --horizon-environment, else horizon.env, else app.env (HorizonCommand).
func (h horizonFlags) horizonEnvironment(hc map[string]any) string {
	if h.environment != "" {
		return h.environment
	}
	for _, key := range []string{"env", "app_env"} {
		if s, ok := hc[key].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// applyHorizonSupervisor fills the worker's settings from
// --horizon-supervisor's supervisor, as Horizon starts its workers
// (horizon:work <connection> --queue --tries --timeout ...), except where
// a flag was given.
func (f *workFlags) applyHorizonSupervisor(conn *queueconn.Connection, info appconfig.AppInfo) error {
	h := f.horizonFlags
	if h.supervisor == "" {
		return nil
	}
	if conn.Driver != queueconn.DriverRedis {
		return fmt.Errorf("--horizon-supervisor: the queue connection %q has driver %q; Horizon's supervisors run redis connections", conn.Name, conn.Driver)
	}
	r := info.RedisQueue
	if r == nil || !r.Horizon || r.HorizonConfig == nil {
		return fmt.Errorf("--horizon-supervisor %s: laravel/horizon is not installed in the app, or config('horizon') was not read", h.supervisor)
	}
	env := h.horizonEnvironment(r.HorizonConfig)
	if env == "" {
		return fmt.Errorf("--horizon-supervisor %s: no environment: config('horizon.env') and APP_ENV are empty; pass --horizon-environment", h.supervisor)
	}
	s, err := horizon.PlannedSupervisor(r.HorizonConfig, env, h.supervisor)
	if err != nil {
		return fmt.Errorf("--horizon-supervisor: %w", err)
	}
	if s.Connection != conn.Name {
		return fmt.Errorf("--horizon-supervisor %s runs the queue connection %q, and this worker serves %q: pass --connection %s", h.supervisor, s.Connection, conn.Name, s.Connection)
	}
	if !h.explicit["concurrency"] && s.MaxProcesses < 1 {
		return fmt.Errorf("--horizon-supervisor %s: maxProcesses is %d; the worker needs at least 1 (or pass --concurrency)", h.supervisor, s.MaxProcesses)
	}
	taken := f.takeSupervisorSettings(s)
	logSupervisorTaken(f.log, s, env, taken, h.explicit)
	return nil
}

// takeSupervisorSettings sets what the flags did not, and names what it
// set.
func (f *workFlags) takeSupervisorSettings(s horizon.Supervisor) []string {
	var taken []string
	set := func(flag string, apply func()) {
		if !f.horizonFlags.explicit[flag] {
			apply()
			taken = append(taken, flag)
		}
	}
	w := &f.worker
	set("queue", func() { w.Queues = worker.ParseQueues(s.Queue) })
	set("tries", func() { w.Tries = orNone(s.MaxTries) })
	set("timeout", func() { w.Timeout = orNone(seconds(float64(s.Timeout))) })
	set("backoff", func() { w.Backoff = s.Backoff })
	set("memory", func() { w.MemoryMB = orNone(s.Memory) })
	set("concurrency", func() { w.Concurrency = s.MaxProcesses })
	set("sleep", func() { w.Sleep = orNone(seconds(s.Sleep)) })
	set("rest", func() { w.Rest = seconds(s.Rest) })
	set("max-jobs", func() { w.MaxJobs = s.MaxJobs })
	set("max-time", func() { w.MaxTime = seconds(float64(s.MaxTime)) })
	set("name", func() { w.Name = s.WorkersName })
	return taken
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// logSupervisorTaken says which supervisor the worker copies, and what
// Go does not do as Horizon's workers do.
func logSupervisorTaken(log zerolog.Logger, s horizon.Supervisor, env string, taken []string, explicit map[string]bool) {
	var kept []string
	for _, name := range supervisorFlags {
		if explicit[name] {
			kept = append(kept, "--"+name)
		}
	}
	log.Info().Str("supervisor", s.Key).Str("environment", env).Str("plan", s.Environment).Str("queue", s.Queue).
		Int("max_processes", s.MaxProcesses).Int("tries", s.MaxTries).Int("timeout", s.Timeout).Str("backoff", s.Backoff).
		Int("memory", s.Memory).Strs("taken", taken).Strs("flags_kept", kept).
		Msg("--horizon-supervisor: the worker takes this Horizon supervisor's settings (flags given on the command line win)")
	if s.Balance == "simple" || s.Balance == "auto" {
		log.Warn().Str("supervisor", s.Key).Str("balance", s.Balance).
			Msg("--horizon-supervisor: Horizon balances this supervisor's processes among its queues; the Go worker runs one pool of maxProcesses over the queues in priority order, as balance off does")
	}
	if s.Nice != 0 {
		log.Warn().Int("nice", s.Nice).Msg("--horizon-supervisor: the supervisor's nice is not applied to the Go worker")
	}
}

// horizonRun is a Go worker listed in Horizon's process lists, and what
// Horizon asked of it.
type horizonRun struct {
	w *worker.Worker
	// stop ends the worker's run as a stop signal does.
	stop context.CancelFunc
	// status is the exit status a Terminate command asked for (-1: none).
	status atomic.Int64
}

func (h *horizonRun) Paused() bool { return h.w.Paused() }
func (h *horizonRun) Pause()       { h.w.Pause() }
func (h *horizonRun) Resume()      { h.w.Resume() }
func (h *horizonRun) Terminate(status int) {
	h.status.Store(int64(status))
	h.stop()
}

// exitStatus is the status a Terminate command asked for, if any.
func (h *horizonRun) exitStatus() (int, bool) {
	if h == nil {
		return 0, false
	}
	s := h.status.Load()
	return int(s), s >= 0
}

// startHorizonRegistration lists the worker in Horizon's masters and
// supervisors until the returned stop is called (after the worker's
// run). stopRun ends the run when a Terminate command arrives. Without
// Horizon's records, or with --horizon-register=false, it does nothing.
func startHorizonRegistration(ctx context.Context, f workFlags, conn *queueconn.Connection, info appconfig.AppInfo, w *worker.Worker, stopRun context.CancelFunc) (*horizonRun, func(), error) {
	if conn.Horizon == nil || !f.horizonFlags.register {
		return nil, func() {}, nil
	}
	cfg, err := horizonProcessConfig(f, conn, info)
	if err != nil {
		return nil, nil, err
	}
	procs, err := conn.Horizon.Processes(cfg)
	if err != nil {
		return nil, nil, err
	}
	run := &horizonRun{w: w, stop: stopRun}
	run.status.Store(-1)
	reg := &horizon.Registration{Processes: procs, Worker: run, Logger: f.log}
	if err := reg.Start(ctx); err != nil {
		return nil, nil, fmt.Errorf("horizon: writing this worker's master and supervisor records: %w (--horizon-register=false lists it nowhere)", err)
	}
	f.log.Info().Str("master", procs.MasterName()).Str("supervisor", procs.SupervisorName()).Int("pid", cfg.PID).
		Msg("Horizon: this worker is listed in Horizon's masters and supervisors; php artisan horizon:pause, horizon:continue and horizon:terminate on this host reach it")
	regCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { reg.Run(regCtx); close(done) }()
	return run, func() { cancel(); <-done }, nil
}

// horizonProcessConfig is what the worker's records say: its effective
// settings as a supervisor's options, under the supervisor name of
// --horizon-supervisor (else "laraworker-<name>"), its master named
// after MasterSupervisor::basename().
func horizonProcessConfig(f workFlags, conn *queueconn.Connection, info appconfig.AppInfo) (horizon.ProcessConfig, error) {
	var hc map[string]any
	if info.RedisQueue != nil {
		hc = info.RedisQueue.HorizonConfig
	}
	basename, _ := hc["basename"].(string)
	if basename == "" {
		host, err := os.Hostname()
		if err != nil {
			return horizon.ProcessConfig{}, fmt.Errorf("horizon: this host's name: %w", err)
		}
		if basename, err = horizon.Basename(host); err != nil {
			return horizon.ProcessConfig{}, err
		}
	}
	key := f.horizonFlags.supervisor
	if key == "" {
		key = "laraworker-" + f.worker.Name
	}
	// The environment is marked: the dashboard lists, under a master, the
	// supervisors its environment's plan has and it does not run, as
	// inactive; a Go worker runs one.
	env := strings.TrimSpace(f.horizonFlags.horizonEnvironment(hc) + " (laraworker)")
	w := f.worker
	return horizon.ProcessConfig{
		Basename: basename, Environment: env, Supervisor: key, PID: os.Getpid(),
		Options: horizon.SupervisorOptions{
			Balance: "off", Connection: conn.Name, Queue: strings.Join(w.Queues, ","), Backoff: w.Backoff,
			MaxProcesses: w.Concurrency, MinProcesses: w.Concurrency, MaxTries: max(w.Tries, 0),
			MaxTime: int(w.MaxTime / time.Second), MaxJobs: w.MaxJobs, Memory: max(w.MemoryMB, 0),
			WorkersName: w.Name, Sleep: max(w.Sleep, 0).Seconds(), Timeout: int(max(w.Timeout, 0) / time.Second),
			BalanceCooldown: 3, BalanceMaxShift: 1, ParentID: os.Getpid(), Rest: w.Rest.Seconds(),
			AutoScalingStrategy: "time", Laraworker: versionOr(Version),
		},
	}, nil
}

func versionOr(v string) string {
	if v == "" {
		return "dev"
	}
	return v
}

// horizonUsageError is a --horizon-supervisor problem: the usage status.
func horizonUsageError(err error) error { return cmdline.UsageError("work: %v", err) }
