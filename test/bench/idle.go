package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/internal/servercpu"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// idleSettle is how long a worker runs on the empty queue before its idle
// CPU is counted: its boot (PHP's framework, laraworker's config read and
// pools) is not what a worker costs while it waits.
const idleSettle = 3 * time.Second

// quietAt is when laraworker's idle CPU is counted again by default
// (--idle-quiet-at): past the minute after the last job (here, the start)
// in which a database worker polls every --idle-poll (1 s), then doubles
// its wait up to --sleep (3 s) as PHP's sleeps. What it costs from then on
// is what an idle worker costs; its first minute is reported beside it.
const quietAt = 70 * time.Second

// idleCPUs measures, for --idle-time, what each worker costs per second
// of wall time while the queue stays empty, at its defaults (no --sleep,
// no --concurrency): laraworker's work, in its first minute idle
// ("lw-first-minute") and after it ("lw"), and, with an app, one
// php artisan queue:work. One at a time, so neither sees the other's load.
// laraworker's runs without its dashboard heartbeat (workCommand: the
// bench leaves no tables of laraworker's in the database it is given),
// which `work` has on by default: its reads of the pause requests (at
// most one a second, asked for by the claim loop) and its row's write
// every 5 s are not in this figure (docs/PERFORMANCE.md, "Pick-up latency",
// measures them).
func (b *runner) idleCPUs(d time.Duration, round int) (map[string]float64, error) {
	if err := b.reset(); err != nil {
		return nil, err
	}
	type idler struct {
		names []string
		cmd   func() *exec.Cmd
		// at are when each window starts, after the start.
		at []time.Duration
		// note is what its line says of settings beyond the defaults.
		note string
	}
	idlers := []idler{{[]string{"lw-first-minute", "lw"}, func() *exec.Cmd { return b.idleWorkCommand() },
		[]time.Duration{idleSettle, max(b.c.Duration("idle-quiet-at"), idleSettle+d)}, " (dashboard heartbeat off)"}}
	if b.phpApp != "" {
		idlers = append(idlers, idler{[]string{"php-1"}, func() *exec.Cmd { return b.phpCommand() }, []time.Duration{idleSettle}, ""})
	}
	out := map[string]float64{}
	for _, it := range alternate(idlers, round) {
		ms, err := idleCPU(it.cmd(), d, it.at)
		if err != nil {
			return nil, fmt.Errorf("idle %s: %w", it.names[0], err)
		}
		for i, name := range it.names {
			out[name] = ms[i]
			b.progress("idle %-15s %6.2f ms of CPU per second, at its defaults on the empty queue, from %s after its start%s", name, ms[i], it.at[i], it.note)
		}
	}
	return out, nil
}

// idleWorkCommand is `laraworker work` as a user starts it: the default
// concurrency and sleep, and, beside an app, the app's Laravel version,
// which a worker started with --app reads from it (the bench's worker
// reads a .env of its own, outside the app).
func (b *runner) idleWorkCommand() *exec.Cmd {
	cmd := b.workCommand(contender{concurrency: 1})
	args := cmd.Args[:0:0]
	for i := 0; i < len(cmd.Args); i++ {
		if cmd.Args[i] == "--concurrency" { // the default, not the contender's
			i++
			continue
		}
		args = append(args, cmd.Args[i])
	}
	if b.phpApp != "" {
		if v, _ := appconfig.DetectLaravelVersion(b.phpApp); v != "" {
			args = append(args, "--laravel-version", v)
		}
	}
	cmd.Args = args
	return cmd
}

// idleCPU starts cmd and returns its CPU milliseconds (user + system, the
// threads' schedstat) per second over d from each of the times at after
// its start, in order.
func idleCPU(cmd *exec.Cmd, d time.Duration, at []time.Duration) ([]float64, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	started := time.Now()
	var out []float64
	for _, a := range at {
		time.Sleep(time.Until(started.Add(a)))
		cpu0, err := threadsCPU(cmd.Process.Pid)
		if err != nil {
			return nil, fmt.Errorf("the worker stopped before it was measured: %w", err)
		}
		t0 := time.Now()
		time.Sleep(d)
		cpu1, err := threadsCPU(cmd.Process.Pid)
		if err != nil {
			return nil, fmt.Errorf("the worker stopped while idle: %w", err)
		}
		out = append(out, float64(cpu1-cpu0)/1e6/time.Since(t0).Seconds())
	}
	return out, nil
}

// threadsCPU is the nanoseconds of CPU the live threads of pid have run
// (/proc/<pid>/task/*/schedstat): an idle worker spends a few
// milliseconds a second, below the 10 ms tick of /proc/<pid>/stat.
// Without schedstat (a kernel built without it) the tick count it is.
func threadsCPU(pid int) (int64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		d, err := servercpu.Process(pid)
		return d.Nanoseconds(), err
	}
	var sum int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended between the glob and the read
		}
		fields := strings.Fields(string(data))
		if len(fields) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", t, err)
		}
		sum += ns
	}
	return sum, nil
}

// alternate is xs in order in odd rounds and reversed in even ones, so
// that no contender always gets the fresher machine.
func alternate[T any](xs []T, round int) []T {
	out := append([]T(nil), xs...)
	if round%2 == 0 {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}
