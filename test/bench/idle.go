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

// idleCPUs measures, for --idle-time, what each worker costs per second
// of wall time while the queue stays empty, at its defaults (no --sleep,
// no --concurrency): laraworker's work and, with an app, one
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
		name string
		cmd  func() *exec.Cmd
		// note is what its line says of settings beyond the defaults.
		note string
	}
	idlers := []idler{{"lw", func() *exec.Cmd { return b.idleWorkCommand() }, " (dashboard heartbeat off)"}}
	if b.phpApp != "" {
		idlers = append(idlers, idler{"php-1", func() *exec.Cmd { return b.phpCommand() }, ""})
	}
	out := map[string]float64{}
	for _, it := range alternate(idlers, round) {
		ms, err := idleCPU(it.cmd(), d)
		if err != nil {
			return nil, fmt.Errorf("idle %s: %w", it.name, err)
		}
		out[it.name] = ms
		b.progress("idle %-6s %6.2f ms of CPU per second, at its defaults on the empty queue%s", it.name, ms, it.note)
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

// idleCPU starts cmd, lets it settle, and returns its CPU milliseconds
// (user + system, /proc/<pid>/stat) per second over the next d.
func idleCPU(cmd *exec.Cmd, d time.Duration) (float64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	time.Sleep(idleSettle)
	cpu0, err := threadsCPU(cmd.Process.Pid)
	if err != nil {
		return 0, fmt.Errorf("the worker stopped before it was measured: %w", err)
	}
	t0 := time.Now()
	time.Sleep(d)
	cpu1, err := threadsCPU(cmd.Process.Pid)
	if err != nil {
		return 0, fmt.Errorf("the worker stopped while idle: %w", err)
	}
	return float64(cpu1-cpu0) / 1e6 / time.Since(t0).Seconds(), nil
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
