package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// contender is one way of draining the queue.
type contender struct {
	name        string
	php         bool // php artisan queue:work, procs processes
	procs       int
	concurrency int // laraworker --concurrency
	exact       bool
	raw         string // "exact": Laravel's per-job statements; "batch": batched claim + one delete; "store": the store's Claim and Delete
	batch       int
	claimers    int  // raw batch loops running at once (0: one)
	latency     bool // also measured in the latency phase
}

func allContenders() []contender {
	return []contender{
		{name: "php-1", php: true, procs: 1, latency: true},
		{name: "php-2", php: true, procs: 2},
		{name: "lw-exact", concurrency: 1, exact: true, latency: true},
		{name: "raw-exact", raw: "exact"},
		{name: "lw-c1", concurrency: 1, latency: true},
		{name: "raw-b1", raw: "batch", batch: 1},
		{name: "lw-c16", concurrency: 16},
		{name: "raw-b16", raw: "batch", batch: 16},
		{name: "lw-c128", concurrency: 128, latency: true},
		{name: "raw-b128", raw: "batch", batch: 128},
		// Two claimers taking 256 rows each: the most the server gives a
		// batched loop here (issue 24's second ceiling for lw-c128).
		{name: "raw-2x256", raw: "batch", batch: 256, claimers: 2},
		// The worker's own store calls at its c128 claim size, claims and
		// deletes pipelined as in the worker, without its job path
		// (raw_store.go): lw-c128 against it is the job path's cost.
		{name: "raw-store128", raw: "store", batch: 128},
		{name: "raw-store2x128", raw: "store", batch: 128, claimers: 2},
		{name: "raw-store256", raw: "store", batch: 256},
	}
}

func allContenderNames() []string {
	var out []string
	for _, c := range allContenders() {
		out = append(out, c.name)
	}
	return out
}

// drainMeasure is one drain of n jobs by one contender.
type drainMeasure struct {
	Jobs       int     `json:"jobs"`
	JobsPerSec float64 `json:"jobs_per_sec"`
	// CPUPer1k is user+system CPU milliseconds of the worker processes per
	// 1,000 jobs (0 for the in-process raw loops: not measured).
	CPUPer1k float64 `json:"cpu_ms_per_1k"`
	// ServerCPUPer1k is the database server's CPU milliseconds per 1,000
	// jobs over the drain (0: not measured, e.g. SQLite, whose cost is the
	// worker's own).
	ServerCPUPer1k float64 `json:"server_cpu_ms_per_1k,omitempty"`
	// RawClientCPUPer1k is the bench process's own CPU milliseconds per
	// 1,000 jobs over a raw loop's drain: the loop's client side (driver,
	// scanning), which shares the cores with the server as a worker does.
	RawClientCPUPer1k float64 `json:"raw_client_cpu_ms_per_1k,omitempty"`
	// Statements is what the server counted over the drain, per 1,000
	// jobs (stmtmeter.go): MariaDB/MySQL Questions and Com_*, PostgreSQL
	// xacts (one per autocommitted statement).
	Statements map[string]float64 `json:"server_statements_per_1k,omitempty"`
	PeakRSSMB  float64            `json:"peak_rss_mb"`
	WallSec    float64            `json:"wall_sec"`
	StartSec   float64            `json:"startup_sec"` // the empty-queue run subtracted from WallSec
	Load1      float64            `json:"load1"`
	Left       int                `json:"left,omitempty"` // jobs a PHP worker left reserved
	// Killed: the drain, or the empty-queue run before it, did not stop
	// by itself within its limit (a worker still in a claim, which
	// --max-time does not interrupt) and was killed; Jobs counts what the
	// drain had drained by then.
	Killed bool `json:"killed,omitempty"`
}

// measureDrain empties the tables, times the contender on an empty queue
// (its start-up and shut-down cost), pushes n jobs and times the drain.
func (b *runner) measureDrain(ct contender, n int) (drainMeasure, error) {
	if err := b.reset(); err != nil {
		return drainMeasure{Jobs: n}, err
	}
	base, err := b.emptyRun(ct)
	if err != nil {
		return drainMeasure{Jobs: n}, err
	}
	if err := b.pushJobs(b.c.Context, n, 0); err != nil {
		return drainMeasure{Jobs: n}, err
	}
	return b.drainPushed(ct, n, base, 0, 0)
}

// emptyRun runs the contender on a queue holding none of its jobs: its
// start-up and shut-down cost, subtracted from the drain (nothing for the
// in-process raw loops).
func (b *runner) emptyRun(ct contender) (procStats, error) {
	if ct.raw != "" {
		return procStats{}, nil
	}
	base, err := b.runProcs(b.c.Context, b.drainCommands(ct), time.Minute)
	if err != nil {
		return base, fmt.Errorf("empty-queue run: %w", err)
	}
	return base, nil
}

// drainPushed times the drain of the n jobs pushed; keep rows that are
// not the contender's (another class's backlog) must still be there after.
// With a limit the drain stops then (--max-time) and counts the jobs it
// did drain.
func (b *runner) drainPushed(ct contender, n int, base procStats, keep int, limit time.Duration) (drainMeasure, error) {
	ctx := b.c.Context
	m := drainMeasure{Jobs: n}
	m.Load1 = load1()
	stmts := b.startStmtMeter(ctx)
	server := b.startServerMeter()
	self := processCPU()
	st, err := b.limitedDrain(ctx, ct, limit, time.Duration(n+keep)*10*time.Millisecond+2*time.Minute)
	if err != nil {
		return m, err
	}
	clientCPU := processCPU() - self
	left, err := b.countRows(b.cfg.JobsTable)
	left -= keep
	switch {
	case err != nil:
		return m, err
	case left > 0 && limit > 0 && left < n: // stopped by the limit
		m.Jobs, n, left = n-left, n-left, 0
	case left > 0 && !ct.php:
		return m, fmt.Errorf("drain left %d jobs in the table", left)
	case left < 0:
		return m, fmt.Errorf("the drain deleted %d rows that were not its jobs", -left)
	}
	// PHP workers sharing SQLite can leave a job reserved when a delete
	// hits "database is locked" (Laravel does not retry it); what they did
	// process is what counts.
	m.Left = left
	n -= left
	m.ServerCPUPer1k = server.per1k(n)
	m.Statements = stmts.per1k(ctx, n)
	if ct.raw != "" {
		m.RawClientCPUPer1k = float64(clientCPU.Milliseconds()) / float64(n) * 1000
	}
	if failed, err := b.countRows(b.cfg.FailedTable); err != nil || failed != 0 {
		return m, fmt.Errorf("%d jobs failed (%v)", failed, err)
	}
	net := st.wall - base.wall
	if net <= 0 {
		net = st.wall
	}
	m.WallSec, m.StartSec = st.wall.Seconds(), base.wall.Seconds()
	m.JobsPerSec = float64(n) / net.Seconds()
	if ct.raw == "" {
		// As for the wall time: a short drain can cost less CPU than the
		// empty-queue run it is measured against (a process's start-up
		// moves by tens of ms), and a negative cost is no measure; the
		// drain's whole CPU, start-up included, is then the bound given.
		cpu := st.cpu - base.cpu
		if cpu <= 0 {
			cpu = st.cpu
		}
		m.CPUPer1k = float64(cpu.Milliseconds()) / float64(n) * 1000
	}
	m.PeakRSSMB = float64(st.maxRSSKB) / 1024
	return m, nil
}

// limitedDrain runs the contender's drain, stopping it after limit when
// there is one (else killing it after deadline, a failure).
func (b *runner) limitedDrain(ctx context.Context, ct contender, limit, deadline time.Duration) (procStats, error) {
	if ct.raw != "" {
		if limit <= 0 {
			return b.rawDrain(ctx, ct)
		}
		rctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		st, err := b.rawDrain(rctx, ct)
		if err != nil && rctx.Err() != nil && ctx.Err() == nil { // the limit, not a failure
			return procStats{wall: limit}, nil
		}
		return st, err
	}
	cmds := b.drainCommands(ct)
	if limit > 0 {
		for _, cmd := range cmds {
			cmd.Args = append(cmd.Args, "--max-time", strconv.Itoa(max(1, int(limit.Seconds()))))
		}
		deadline = limit + 2*time.Minute
	}
	return b.runProcs(ctx, cmds, deadline)
}

// drainCommands are the worker processes for a contender, stopping when
// the queue is empty.
func (b *runner) drainCommands(ct contender) []*exec.Cmd {
	if ct.php {
		var cmds []*exec.Cmd
		for range ct.procs {
			cmds = append(cmds, b.phpCommand("--sleep=0", "--stop-when-empty"))
		}
		return cmds
	}
	var cmds []*exec.Cmd
	for range b.goProcs() {
		cmds = append(cmds, b.workCommand(ct, "--sleep", "0", "--stop-when-empty"))
	}
	return cmds
}

// goProcs is --processes: how many laraworker processes drain the queue
// together in each lw-* drain and continuous window (how cost grows with
// the workers on one database, docs/PERFORMANCE.md).
func (b *runner) goProcs() int { return max(1, b.c.Int("processes")) }

func (b *runner) phpCommand(extra ...string) *exec.Cmd {
	args := append([]string{"artisan", "queue:work", "database", "--queue=default"}, extra...)
	cmd := exec.Command(b.phpBin, args...)
	cmd.Dir = b.phpApp
	cmd.Env = childEnv()
	return cmd
}

func (b *runner) workCommand(ct contender, extra ...string) *exec.Cmd {
	// --heartbeat=false: the bench works tables of its own in the
	// database it is given; the worker's fleet row (laraworker's own
	// tables, made on first start) would leave tables there.
	args := []string{"work", "--env", b.envFile, "--queue", "default", "--route", benchClass + "=noop",
		"--concurrency", strconv.Itoa(ct.concurrency), "--heartbeat=false"}
	if ct.exact {
		args = append(args, "--laravel-exact")
	}
	cmd := exec.Command(b.exe, append(args, extra...)...)
	cmd.Env = childEnv()
	return cmd
}

// childEnv is this process's environment without the variables that would
// override the bench .env (Laravel and laraworker both let the real
// environment win).
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "DB_"), strings.HasPrefix(name, "APP_"), strings.HasPrefix(name, "QUEUE_"),
			strings.HasPrefix(name, "CACHE_"), strings.HasPrefix(name, "LARAWORKER_"), name == "DATABASE_URL":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// procStats sums what the kernel accounted to a group of processes.
type procStats struct {
	wall     time.Duration
	cpu      time.Duration // user + system, all processes
	maxRSSKB int64         // the largest peak of one process
}

// errKilledAtLimit: runProcs killed the commands still running at its
// limit (the kill's own "signal: killed" errors are in the same error).
var errKilledAtLimit = errors.New("killed at the time limit")

// runProcs starts the commands together and waits for all of them; wall is
// from the first start to the last exit. Output goes to a log file whose
// tail is returned with a failure. Commands still running after limit are
// killed, and the error then wraps errKilledAtLimit.
func (b *runner) runProcs(ctx context.Context, cmds []*exec.Cmd, limit time.Duration) (procStats, error) {
	var st procStats
	logs := make([]*os.File, len(cmds))
	for i, cmd := range cmds {
		f, err := os.Create(filepath.Join(b.dir, fmt.Sprintf("worker-%d.log", i)))
		if err != nil {
			return st, err
		}
		defer f.Close()
		logs[i], cmd.Stdout, cmd.Stderr = f, f, f
	}
	start := time.Now()
	for i, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			killAll(cmds[:i])
			return st, err
		}
	}
	killed := make(chan struct{})
	timer := time.AfterFunc(limit, func() { close(killed); killAll(cmds) })
	defer timer.Stop()
	var errs []error
	for i, cmd := range cmds {
		err := cmd.Wait()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w: %s", filepath.Base(cmd.Path), err, logTail(logs[i].Name())))
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			st.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			st.maxRSSKB = max(st.maxRSSKB, ru.Maxrss)
		}
	}
	st.wall = time.Since(start)
	if ctx.Err() != nil {
		return st, ctx.Err()
	}
	select {
	case <-killed:
		errs = append(errs, fmt.Errorf("%w (%s)", errKilledAtLimit, limit))
	default:
	}
	return st, errors.Join(errs...)
}

func killAll(cmds []*exec.Cmd) {
	for _, cmd := range cmds {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
}

func logTail(path string) string {
	data, _ := os.ReadFile(path)
	data = bytes.TrimSpace(data)
	if len(data) > 600 {
		data = data[len(data)-600:]
	}
	return string(data) // made one line (and scrubbed) with the error it joins
}

// reset empties the bench tables.
func (b *runner) reset() error {
	ctx := b.c.Context
	for _, t := range []string{b.cfg.JobsTable, b.cfg.FailedTable, b.cfg.BatchesTable} {
		if _, err := b.q.DB().ExecContext(ctx, "delete from "+b.q.Dialect().Quote(t)); err != nil {
			return err
		}
	}
	return nil
}

func (b *runner) countRows(table string) (int, error) { return countRows(b.c.Context, b.q, table) }

// pushJobs inserts n jobs in bulk, each with its own uuid, as Queue::bulk
// would: delay applies to all of them.
func (b *runner) pushJobs(ctx context.Context, n int, delay time.Duration) error {
	const perCall = 5000
	items := make([]jobqueue.PushItem, 0, min(n, perCall))
	for i := range n {
		raw, err := b.jobs.payload()
		if err != nil {
			return err
		}
		items = append(items, jobqueue.PushItem{Queue: "default", Payload: raw, Delay: delay})
		if len(items) == perCall || i == n-1 {
			if err := b.q.PushMany(ctx, items); err != nil {
				return err
			}
			items = items[:0]
		}
	}
	return nil
}

// load1 is the 1-minute load average, recorded with every figure because
// the machine may be shared.
func load1() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	return f
}

// idleRSS starts `work --concurrency n` on the empty queue with the
// default --sleep and reads its resident set size after a few idle polls.
func (b *runner) idleRSS(concurrency int) (float64, error) {
	if err := b.reset(); err != nil {
		return 0, err
	}
	cmd := b.workCommand(contender{concurrency: concurrency}, "--sleep", "1")
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	time.Sleep(4 * time.Second)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}
