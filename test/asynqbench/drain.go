package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// contender is a queue library run in this process: load puts n no-op
// jobs on the queue (not timed), work runs them with concurrency c and
// returns when all n are done, with a function that stops what is left
// running (not timed).
type contender interface {
	name() string
	load(ctx context.Context, n int) error
	work(ctx context.Context, n, c int) (stop func(), err error)
}

// measure is one drain.
type measure struct {
	JobsPerSec float64 `json:"jobs_per_sec"`
	WallSec    float64 `json:"wall_sec"`
	// CPUPer1k is the worker's CPU (user + system) per 1,000 jobs: this
	// process's over the drain for the libraries (only the contender
	// draining runs then), the worker process's minus its empty-queue run
	// for the processes. RedisCPUPer1k is the private redis-server's.
	CPUPer1k      float64 `json:"cpu_ms_per_1k"`
	RedisCPUPer1k float64 `json:"redis_cpu_ms_per_1k"`
	// StartSec is the empty-queue run subtracted from a process's wall
	// time (its boot, config read, connect and exit).
	StartSec float64 `json:"startup_sec,omitempty"`
	// RedisIrPerJob is redis-server's instructions per job (-redis-callgrind).
	RedisIrPerJob float64 `json:"redis_ir_per_job,omitempty"`
	// RedisCommandsPerJob is what redis-server ran per job (INFO
	// commandstats, commands called from scripts included); RoundTripsPerJob
	// the requests the worker sent per job, a pipeline or a script being
	// one (counted in the client: laraworker's library only).
	RedisCommandsPerJob float64 `json:"redis_commands_per_job,omitempty"`
	RoundTripsPerJob    float64 `json:"round_trips_per_job,omitempty"`
	Load1               float64 `json:"load1"`
}

// drain measures one drain of n jobs by a library contender; with
// profile set, a CPU profile of the drain (the timed part only) goes
// there.
func drain(ctx context.Context, srv *redisServer, ct contender, n, c int, profile string) (measure, error) {
	var m measure
	if err := srv.flush(ctx); err != nil {
		return m, err
	}
	if err := ct.load(ctx, n); err != nil {
		return m, fmt.Errorf("loading: %w", err)
	}
	runtime.GC() // the load's garbage is not the drain's
	m.Load1 = load1()
	cpu0 := selfCPU()
	srv0, _ := srv.cpu()
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return m, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return m, err
		}
	}
	if err := srv.countStart(ctx); err != nil {
		return m, err
	}
	if err := srv.resetStats(ctx); err != nil {
		return m, err
	}
	trips0 := roundTrips(ct)
	drainStarts()
	start := time.Now()
	stop, err := ct.work(ctx, n, c)
	wall := time.Since(start)
	drainEnded()
	ir, irErr := srv.countEnd(ctx)
	trips := roundTrips(ct) - trips0
	cmds, cmdErr := srv.commands(ctx)
	if profile != "" {
		pprof.StopCPUProfile()
	}
	cpu := selfCPU() - cpu0
	srv1, _ := srv.cpu()
	if stop != nil {
		stop()
	}
	if err != nil {
		return m, err
	}
	if irErr != nil {
		return m, irErr
	}
	if cmdErr != nil {
		return m, cmdErr
	}
	m.RedisIrPerJob = float64(ir) / float64(n)
	m.RedisCommandsPerJob, m.RoundTripsPerJob = float64(cmds)/float64(n), float64(trips)/float64(n)
	m.WallSec, m.JobsPerSec = wall.Seconds(), float64(n)/wall.Seconds()
	m.CPUPer1k, m.RedisCPUPer1k = per1k(cpu, n), per1k(srv1-srv0, n)
	return m, nil
}

// procDrain measures one drain of n jobs by a worker process: its run on
// the empty queue first (subtracted), then the drain of the jobs lw
// pushes (the same payloads for PHP and laraworker).
func procDrain(ctx context.Context, srv *redisServer, p *procContender, lw *laraworkerContender, n int) (measure, error) {
	var m measure
	if err := srv.flush(ctx); err != nil {
		return m, err
	}
	base, err := p.run(ctx, time.Minute)
	if err != nil {
		return m, fmt.Errorf("empty-queue run: %w", err)
	}
	if err := lw.load(ctx, n); err != nil {
		return m, fmt.Errorf("loading: %w", err)
	}
	m.Load1 = load1()
	if err := srv.countStart(ctx); err != nil {
		return m, err
	}
	if err := srv.resetStats(ctx); err != nil {
		return m, err
	}
	srv0, _ := srv.cpu()
	r, err := p.run(ctx, time.Duration(n)*10*time.Millisecond+2*time.Minute)
	if err != nil {
		return m, err
	}
	srv1, _ := srv.cpu()
	ir, err := srv.countEnd(ctx)
	if err != nil {
		return m, err
	}
	cmds, err := srv.commands(ctx)
	if err != nil {
		return m, err
	}
	m.RedisIrPerJob = float64(ir) / float64(n)
	m.RedisCommandsPerJob = float64(cmds) / float64(n)
	if left, err := lw.left(ctx); err != nil || left > 0 {
		return m, fmt.Errorf("%s left %d jobs in Redis (%v)", p.label, left, err)
	}
	wall := r.wall - base.wall
	if wall <= 0 {
		return m, fmt.Errorf("%s: the drain (%v) took no longer than the empty-queue run (%v): use more jobs", p.label, r.wall, base.wall)
	}
	m.WallSec, m.StartSec, m.JobsPerSec = wall.Seconds(), base.wall.Seconds(), float64(n)/wall.Seconds()
	m.CPUPer1k, m.RedisCPUPer1k = per1k(max(r.cpu-base.cpu, 0), n), per1k(srv1-srv0, n)
	return m, nil
}

func per1k(d time.Duration, n int) float64 {
	return float64(d.Microseconds()) / 1000 / float64(n) * 1000
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// load1 is the 1-minute load average, recorded with every figure: the
// machine may be shared.
func load1() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	return f
}

// drainStarts and drainEnded mark the timed part of a drain for
// callgrind: run with --dump-before=main.drainStarts
// --dump-before=main.drainEnded and each drain's instructions are in a
// dump of their own (docs/PERFORMANCE.md, "Against asynq").
//
//go:noinline
func drainStarts() {}

//go:noinline
func drainEnded() {}
