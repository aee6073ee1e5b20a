package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/internal/servercpu"
	"github.com/laraworker/laraworker/jobqueue"
)

// continuousMeasure is one window of jobs arriving at a fixed rate while
// the worker runs as a daemon, optionally beside php artisan queue:work
// handling PHP-only jobs on the same queue.
type continuousMeasure struct {
	Contender    string  `json:"contender"`
	Rate         int     `json:"rate"`
	Sleep        string  `json:"sleep"` // the workers' --sleep ("default": their own)
	Seconds      float64 `json:"seconds"`
	Pushed       int     `json:"pushed"`
	PushedPerSec float64 `json:"pushed_per_sec"` // what the pushers achieved
	Missed       int     `json:"missed"`         // Go jobs not picked up when the window closed
	P50ms        float64 `json:"p50_ms"`
	P99ms        float64 `json:"p99_ms"`
	// WorkerCPUPer1k is laraworker's CPU over the window per 1,000 Go
	// jobs; ServerCPUPer1k the database server's per 1,000 jobs pushed
	// (Go and PHP: the server cannot tell them apart), pick-up triggers
	// included.
	WorkerCPUPer1k float64    `json:"worker_cpu_ms_per_1k"`
	ServerCPUPer1k float64    `json:"server_cpu_ms_per_1k,omitempty"`
	Load1          float64    `json:"load1"`
	PHP            *phpBeside `json:"php,omitempty"`
}

// phpBeside is the PHP worker's side of a continuous window.
type phpBeside struct {
	Rate     int     `json:"rate"`
	Pushed   int     `json:"pushed"`
	Missed   int     `json:"missed"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	CPUPer1k float64 `json:"cpu_ms_per_1k"`
}

// continuous measures --rounds windows of --duration.
func (b *runner) continuous(rep *report, ct contender) error {
	for round := 1; round <= b.c.Int("rounds"); round++ {
		m, err := b.continuousWindow(ct)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		rep.Continuous = append(rep.Continuous, m)
		b.progress("continuous %-9s round %d: %d jobs at %.0f/s, pick-up p50 %.1f ms p99 %.1f ms, missed %d, cpu %.0f server cpu %.0f ms/1k  load %.2f",
			ct.name, round, m.Pushed, m.PushedPerSec, m.P50ms, m.P99ms, m.Missed, m.WorkerCPUPer1k, m.ServerCPUPer1k, m.Load1)
	}
	return b.reset()
}

func (b *runner) continuousWindow(ct contender) (continuousMeasure, error) {
	ctx := b.c.Context
	m := continuousMeasure{Contender: ct.name, Rate: b.c.Int("rate"), Sleep: "default"}
	if b.c.IsSet("daemon-sleep") {
		m.Sleep = b.c.Duration("daemon-sleep").String()
	}
	phpRate := 0
	if b.phpApp != "" {
		phpRate = b.c.Int("php-rate")
	}
	if err := b.reset(); err != nil {
		return m, err
	}
	if err := b.execAll(ctx, b.pickupTriggers()); err != nil {
		return m, fmt.Errorf("creating the pick-up triggers: %w", err)
	}
	defer func() { _ = b.execAll(context.Background(), b.dropPickupTriggers()) }()
	d, err := b.startDaemons(ct, phpRate > 0)
	if err != nil {
		return m, err
	}
	defer d.stop()
	time.Sleep(2 * time.Second) // past the workers' start-up
	m.Load1 = load1()
	cpu0 := d.cpu()
	server := b.startServerMeter()
	start := time.Now()
	goIDs, phpIDs, err := b.pushAtRate(ctx, m.Rate, phpRate, b.c.Duration("duration"))
	if err != nil {
		return m, err
	}
	m.Pushed, m.PushedPerSec = len(goIDs), float64(len(goIDs))/time.Since(start).Seconds()
	b.waitPickedUp(ctx, 15*time.Second)
	m.Seconds = time.Since(start).Seconds()
	cpu1 := d.cpu()
	m.ServerCPUPer1k = server.per1k(len(goIDs) + len(phpIDs))
	if err := d.stop(); err != nil {
		return m, err
	}
	if failed, err := b.countRows(b.cfg.FailedTable); err != nil || failed != 0 {
		return m, fmt.Errorf("%d jobs failed (%v)", failed, err)
	}
	pickups, err := b.pickupLatencies(ctx)
	if err != nil {
		return m, err
	}
	goMs := latenciesOf(pickups, goIDs)
	m.Missed, m.P50ms, m.P99ms = len(goIDs)-len(goMs), percentile(goMs, 50), percentile(goMs, 99)
	if len(goIDs) > 0 {
		var goCPU time.Duration
		for i := range d.goProcs {
			goCPU += cpu1[i] - cpu0[i]
		}
		m.WorkerCPUPer1k = float64(goCPU.Milliseconds()) / float64(len(goIDs)) * 1000
	}
	if phpRate > 0 {
		phpMs := latenciesOf(pickups, phpIDs)
		m.PHP = &phpBeside{Rate: phpRate, Pushed: len(phpIDs), Missed: len(phpIDs) - len(phpMs),
			P50ms: percentile(phpMs, 50), P99ms: percentile(phpMs, 99)}
		if len(phpIDs) > 0 {
			m.PHP.CPUPer1k = float64((cpu1[d.goProcs] - cpu0[d.goProcs]).Milliseconds()) / float64(len(phpIDs)) * 1000
		}
	}
	return m, nil
}

// daemons are the workers of a continuous window: laraworker's goProcs
// processes first, then php artisan queue:work when it runs beside.
type daemons struct {
	cmds    []*exec.Cmd
	goProcs int
	logs    []string
	stopped bool
}

func (b *runner) startDaemons(ct contender, withPHP bool) (*daemons, error) {
	var sleep []string
	if b.c.IsSet("daemon-sleep") {
		sleep = []string{"--sleep", strconv.FormatFloat(b.c.Duration("daemon-sleep").Seconds(), 'f', -1, 64)}
	}
	d := &daemons{goProcs: b.goProcs()}
	for range d.goProcs {
		d.cmds = append(d.cmds, b.workCommand(ct, sleep...))
	}
	if withPHP {
		var args []string
		if len(sleep) > 0 {
			args = append(args, "--sleep="+sleep[1])
		}
		d.cmds = append(d.cmds, b.phpCommand(args...))
	}
	for i, cmd := range d.cmds {
		log := filepath.Join(b.dir, fmt.Sprintf("daemon-%d.log", i))
		f, err := os.Create(log)
		if err != nil {
			d.stop()
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = f, f
		err = cmd.Start()
		f.Close()
		if err != nil {
			d.stop()
			return nil, err
		}
		d.logs = append(d.logs, log)
	}
	return d, nil
}

// cpu is each daemon's CPU so far (0 for one that cannot be read).
func (d *daemons) cpu() []time.Duration {
	out := make([]time.Duration, len(d.cmds))
	for i, cmd := range d.cmds {
		if cmd.Process != nil {
			out[i], _ = servercpu.Process(cmd.Process.Pid)
		}
	}
	return out
}

// stop asks each daemon to finish (SIGTERM: both workers finish the job at
// hand and exit) and kills what is still running after 30 s. A daemon
// that had died before is an error.
func (d *daemons) stop() error {
	if d.stopped {
		return nil
	}
	d.stopped = true
	var errs []error
	for i, cmd := range d.cmds {
		if cmd.Process == nil {
			continue
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			errs = append(errs, fmt.Errorf("%s had exited during the window: %s", filepath.Base(cmd.Path), logTail(d.logs[i])))
		}
		timer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
		_ = cmd.Wait()
		timer.Stop()
	}
	return errors.Join(errs...)
}

// pushAtRate pushes Go jobs at rate and PHP-only jobs at phpRate per
// second for dur, one by one as an application dispatching them would,
// from a few goroutines so one slow insert does not hold the clock back.
func (b *runner) pushAtRate(ctx context.Context, rate, phpRate int, dur time.Duration) (goIDs, phpIDs []int64, err error) {
	php, err := newJobTemplateFor(phpOnlyClass)
	if err != nil {
		return nil, nil, err
	}
	jobs := make(chan bool, (rate+phpRate)*int(dur.Seconds()+1)) // true: a PHP-only job
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for isPHP := range jobs {
				t := b.jobs
				if isPHP {
					t = php
				}
				raw, err := t.payload()
				var id jobqueue.JobID
				if err == nil {
					id, err = b.q.Push(ctx, jobqueue.PushItem{Queue: "default", Payload: raw})
				}
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case isPHP:
					phpIDs = append(phpIDs, id.Num)
				default:
					goIDs = append(goIDs, id.Num)
				}
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	tick := time.NewTicker(5 * time.Millisecond)
	sentGo, sentPHP := 0, 0
	for now := range tick.C {
		el := min(now.Sub(start), dur).Seconds()
		for ; sentGo < int(el*float64(rate)); sentGo++ {
			jobs <- false
		}
		for ; sentPHP < int(el*float64(phpRate)); sentPHP++ {
			jobs <- true
		}
		if now.Sub(start) >= dur || ctx.Err() != nil {
			break
		}
	}
	tick.Stop()
	close(jobs)
	wg.Wait()
	return goIDs, phpIDs, errors.Join(errs...)
}

// waitPickedUp waits until every job pushed has been reserved, or limit.
func (b *runner) waitPickedUp(ctx context.Context, limit time.Duration) {
	query := b.rawSQL("select count(*) from %s where %s is null", b.qi(b.pickupTable()), b.qi("picked_at"))
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		var n int
		if err := b.q.DB().QueryRowContext(ctx, query).Scan(&n); err != nil || n == 0 {
			return
		}
	}
}

// pickupLatencies is the pick-up latency in ms of every job reserved, by id.
func (b *runner) pickupLatencies(ctx context.Context) (map[int64]float64, error) {
	rows, err := b.q.DB().QueryContext(ctx, b.rawSQL("select %s, %s - %s from %s where %s is not null",
		b.qi("job_id"), b.qi("picked_at"), b.qi("pushed_at"), b.qi(b.pickupTable()), b.qi("picked_at")))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]float64{}
	for rows.Next() {
		var id int64
		var s float64
		if err := rows.Scan(&id, &s); err != nil {
			return nil, err
		}
		out[id] = s * 1000
	}
	return out, rows.Err()
}

func latenciesOf(all map[int64]float64, ids []int64) []float64 {
	var out []float64
	for _, id := range ids {
		if ms, ok := all[id]; ok {
			out = append(out, ms)
		}
	}
	return out
}

func printContinuous(w io.Writer, measures []continuousMeasure) {
	if len(measures) == 0 {
		return
	}
	fmt.Fprintln(w)
	var rows [][]string
	for _, m := range measures {
		php := "-"
		if m.PHP != nil {
			php = fmt.Sprintf("%d at %d/s: p50 %.1f / p99 %.1f ms, missed %d, CPU %.0f ms/1k", m.PHP.Pushed, m.PHP.Rate, m.PHP.P50ms, m.PHP.P99ms, m.PHP.Missed, m.PHP.CPUPer1k)
		}
		rows = append(rows, []string{m.Contender, m.Sleep, fmt.Sprintf("%d", m.Rate), fmt.Sprintf("%.0f", m.PushedPerSec), fmt.Sprintf("%d", m.Pushed),
			fmt.Sprintf("%.1f / %.1f", m.P50ms, m.P99ms), fmt.Sprintf("%d", m.Missed), orDash(ms(m.WorkerCPUPer1k)), orDash(ms(m.ServerCPUPer1k)),
			fmt.Sprintf("%.2f", m.Load1), php})
	}
	_ = console.WriteTable(w, []string{"continuous", "sleep", "rate", "pushed/s", "Go jobs", "pick-up p50 / p99 ms", "missed", "worker CPU ms/1k", "server CPU ms/1k", "load1", "PHP worker beside"}, rows)
}
