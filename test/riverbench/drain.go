package main

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/internal/servercpu"
)

// contender is one queue library: load puts n no-op jobs in its table
// (not timed), work runs them with concurrency c and returns when all n
// are done.
type contender interface {
	name() string
	load(ctx context.Context, n int) error
	work(ctx context.Context, n, c int) error
}

// measure is one drain.
type measure struct {
	JobsPerSec float64 `json:"jobs_per_sec"`
	WallSec    float64 `json:"wall_sec"`
	// CPUPer1k is this process's CPU per 1,000 jobs over the drain (only
	// one contender runs at a time, in this process); ServerCPUPer1k the
	// PostgreSQL server's (all its processes: other clients of the server
	// count too, hence Load1).
	CPUPer1k       float64 `json:"cpu_ms_per_1k"`
	ServerCPUPer1k float64 `json:"server_cpu_ms_per_1k"`
	Load1          float64 `json:"load1"`
}

func drain(ctx context.Context, ct contender, n, c int) (measure, error) {
	var m measure
	if err := ct.load(ctx, n); err != nil {
		return m, err
	}
	runtime.GC() // the load's garbage is not the drain's
	m.Load1 = load1()
	cpu0 := selfCPU()
	srv0, srvErr := servercpu.Read("pgsql")
	start := time.Now()
	drainStarts()
	err := ct.work(ctx, n, c)
	drainEnded()
	if err != nil {
		return m, err
	}
	wall := time.Since(start)
	cpu := selfCPU() - cpu0
	if srvErr == nil {
		if srv1, err := servercpu.Read("pgsql"); err == nil {
			m.ServerCPUPer1k = per1k(srv1-srv0, n)
		}
	}
	m.WallSec, m.JobsPerSec, m.CPUPer1k = wall.Seconds(), float64(n)/wall.Seconds(), per1k(cpu, n)
	return m, nil
}

// drainStarts and drainEnded mark a drain for callgrind.sh, whose
// valgrind dumps its counters when either is called, so one dump holds
// exactly one drain (the load and the set-up are outside it).
//
//go:noinline
func drainStarts() {}

//go:noinline
func drainEnded() {}

func per1k(d time.Duration, n int) float64 { return float64(d.Milliseconds()) / float64(n) * 1000 }

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
