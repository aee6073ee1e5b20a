package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/procmem"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
)

// soakRun is one soak: the worker's pool and the producer's, the worker
// and the counters the samples read.
type soakRun struct {
	opts    soakOptions
	cfg     appconfig.Config
	q       *database.Queue // the worker's connections
	push    *database.Queue // the producer's, as the app that pushes has its own
	jobs    jobTemplate
	w       *worker.Worker
	stderr  io.Writer
	start   time.Time
	pushed  atomic.Int64
	handled atomic.Int64 // noop handler calls that returned nil
}

// soak runs the whole measurement. Goroutines are counted before any
// connection is opened and after everything is closed, so a goroutine the
// worker, the handlers or the drivers leave behind shows.
func soak(ctx context.Context, cfg appconfig.Config, opts soakOptions, stderr io.Writer) (*soakReport, error) {
	before := runtime.NumGoroutine()
	s := &soakRun{opts: opts, cfg: cfg, stderr: stderr}
	if err := s.open(ctx); err != nil {
		s.close()
		return nil, err
	}
	rep, err := s.run(ctx)
	if cerr := s.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	rep.GoroutinesBefore = before
	rep.GoroutinesAfter = settledGoroutines(before, 2*time.Second)
	rep.check()
	return rep, nil
}

func (s *soakRun) open(ctx context.Context) error {
	var err error
	if s.jobs, err = newJobTemplate(); err != nil {
		return err
	}
	if s.q, err = database.Open(ctx, s.cfg, database.Options{}); err != nil {
		return err
	}
	if s.push, err = database.Open(ctx, s.cfg, database.Options{}); err != nil {
		return err
	}
	_ = s.q.DropTables(ctx)
	if err := s.q.CreateTables(ctx); err != nil {
		return err
	}
	s.w, err = worker.New(s.q, s.registry(), s.workerConfig())
	return err
}

// close drops the tables (unless --keep-tables) and closes both pools.
func (s *soakRun) close() error {
	var err error
	if s.q != nil && !s.opts.keepTables {
		err = s.q.DropTables(context.Background())
	}
	for _, q := range []*database.Queue{s.push, s.q} {
		if q != nil {
			q.Close()
		}
	}
	return err
}

// registry routes the bench class to the built-in noop handler and counts
// the calls that succeeded.
func (s *soakRun) registry() *handlers.Registry {
	reg := handlers.NewRegistry()
	reg.Use(func(next handlers.Handler) handlers.Handler {
		return handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
			err := next.Handle(ctx, job)
			if err == nil {
				s.handled.Add(1)
			}
			return err
		})
	})
	reg.Handle(benchClass, handlers.Noop())
	return reg
}

// workerConfig is `work`'s defaults with the soak's concurrency and
// sleep. The memory limit is off: the soak measures memory itself, and a
// worker stopping at --memory would end the run early.
func (s *soakRun) workerConfig() worker.Config {
	sleep := s.opts.sleep
	if sleep == 0 {
		sleep = -1 // none
	}
	return worker.Config{
		Name: "soak", Queues: []string{"default"}, Concurrency: s.opts.concurrency,
		Sleep: sleep, MemoryMB: -1, Logger: s.logger(),
	}
}

// logger passes the worker's warnings and errors on; per-job info lines
// would dominate what is measured.
func (s *soakRun) logger() zerolog.Logger {
	return zerolog.New(s.stderr).Level(zerolog.WarnLevel).With().Timestamp().Logger()
}

// run starts the worker and the producer, samples until the queue is
// drained, then stops the worker and counts what is left.
func (s *soakRun) run(ctx context.Context) (*soakReport, error) {
	rep := newSoakReport(s)
	runCtx, stopWorker := context.WithCancel(ctx)
	defer stopWorker()
	s.start = time.Now()
	stopped := make(chan worker.StopReason, 1)
	go func() { stopped <- s.w.Run(runCtx) }()
	produced := make(chan produceResult, 1)
	go func() { produced <- s.produce(runCtx) }()

	prod, err := s.sampleUntilDrained(ctx, rep, produced)
	if err == nil && ctx.Err() == nil {
		err = s.takeSample(ctx, rep, "end")
	}
	stopWorker()
	rep.StopReason = string(<-stopped)
	if prod == nil { // interrupted or failed while pushing
		r := <-produced
		prod = &r
	}
	rep.setProducer(*prod)
	if err == nil && prod.err != nil && ctx.Err() == nil {
		err = fmt.Errorf("pushing jobs: %w", prod.err)
	}
	if err != nil {
		return nil, err
	}
	rep.Interrupted = ctx.Err() != nil
	return rep, s.countOutcome(rep)
}

// sampleUntilDrained takes the start sample after the warm-up and one every
// --every jobs handled, and returns once every pushed job was handled and
// the jobs table is empty, or when nothing was handled for --drain-timeout
// after the last push (the report then shows what was lost).
func (s *soakRun) sampleUntilDrained(ctx context.Context, rep *soakReport, produced <-chan produceResult) (*produceResult, error) {
	next := sampleThresholds(s.opts)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var prod *produceResult
	lastHandled, lastProgress, lastCount := int64(-1), time.Now(), time.Time{}
	for {
		select {
		case <-ctx.Done():
			return prod, nil
		case r := <-produced:
			if r.err != nil {
				return &r, nil
			}
			prod = &r
		case <-tick.C:
		}
		h := s.handled.Load()
		for len(next) > 0 && h >= next[0].jobs {
			if err := s.takeSample(ctx, rep, next[0].label); err != nil {
				return prod, err
			}
			next = next[1:]
		}
		if h != lastHandled {
			lastHandled, lastProgress = h, time.Now()
		}
		if prod == nil {
			continue
		}
		if time.Since(lastProgress) > s.opts.drainTimeout {
			fmt.Fprintf(s.stderr, "bench soak: nothing handled for %s after the last push; stopping\n", s.opts.drainTimeout)
			return prod, nil
		}
		if h >= prod.pushed && time.Since(lastCount) >= 50*time.Millisecond {
			lastCount = time.Now()
			left, err := countRows(ctx, s.q, s.cfg.JobsTable)
			if err != nil {
				return prod, err
			}
			if left == 0 {
				return prod, nil
			}
		}
	}
}

type threshold struct {
	jobs  int64
	label string
}

// sampleThresholds: "start" after the warm-up, then every --every jobs
// below --jobs (the end sample covers the last stretch).
func sampleThresholds(o soakOptions) []threshold {
	out := []threshold{{int64(o.warmUp), "start"}}
	for n := o.every; n < o.jobs; n += o.every {
		if n > o.warmUp {
			out = append(out, threshold{int64(n), fmt.Sprint(n)})
		}
	}
	return out
}

func (s *soakRun) takeSample(ctx context.Context, rep *soakReport, label string) error {
	sm := soakSample{At: label, ElapsedSec: time.Since(s.start).Seconds(), Pushed: s.pushed.Load(),
		Claimed: s.w.Claimed(), Handled: s.handled.Load()}
	// The heap first: the count query below allocates.
	sm.HeapLiveBytes = liveHeap()
	if err := s.writeHeapProfile(label); err != nil {
		return err
	}
	sm.Goroutines = runtime.NumGoroutine()
	sm.RSSBytes = uint64(procmem.RSS())
	sm.Load1 = load1()
	backlog, err := countRows(ctx, s.q, s.cfg.JobsTable)
	if err != nil {
		return err
	}
	sm.Backlog = backlog
	rep.Samples = append(rep.Samples, sm)
	fmt.Fprintf(s.stderr, "bench soak: %-7s %7.1f s  pushed %d  handled %d  backlog %d  live heap %.2f MiB  RSS %.1f MiB  goroutines %d  load %.2f\n",
		label, sm.ElapsedSec, sm.Pushed, sm.Handled, sm.Backlog, mib(sm.HeapLiveBytes), mib(sm.RSSBytes), sm.Goroutines, sm.Load1)
	return nil
}

// writeHeapProfile saves the heap profile of the collection liveHeap just
// forced, when --heap-profile names a directory.
func (s *soakRun) writeHeapProfile(label string) error {
	if s.opts.heapProfiles == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(s.opts.heapProfiles, "heap-"+label+".pprof"))
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// countOutcome reads what the database holds at the end: jobs left and
// jobs failed.
func (s *soakRun) countOutcome(rep *soakReport) error {
	ctx := context.Background()
	var err error
	rep.Claimed, rep.Handled = s.w.Claimed(), s.handled.Load()
	if rep.Left, err = countRows(ctx, s.q, s.cfg.JobsTable); err != nil {
		return err
	}
	rep.Failed, err = countRows(ctx, s.q, s.cfg.FailedTable)
	return err
}

// produceResult is what the producer did.
type produceResult struct {
	pushed  int64
	seconds float64
	maxLag  time.Duration // furthest behind its schedule
	err     error
}

// produceTick is how often the producer pushes: at 2,000 jobs/s a batch of
// 20 every 10 ms, close to a steady stream at a cost the database takes.
const produceTick = 10 * time.Millisecond

// produce pushes --jobs jobs on schedule: by time t, rate·t jobs. A batch
// that is late (the database was slow) is caught up by the next ones, up to
// 5,000 jobs a statement; how late it got is the lag.
func (s *soakRun) produce(ctx context.Context) (res produceResult) {
	tick := time.NewTicker(produceTick)
	defer tick.Stop()
	total, rate := int64(s.opts.jobs), float64(s.opts.rate)
	var items []jobqueue.PushItem
	start := time.Now()
	defer func() { res.pushed, res.seconds = s.pushed.Load(), time.Since(start).Seconds() }()
	for s.pushed.Load() < total {
		select {
		case <-ctx.Done():
			res.err = ctx.Err()
			return
		case <-tick.C:
		}
		due := min(total, int64(time.Since(start).Seconds()*rate))
		n := due - s.pushed.Load()
		if n <= 0 {
			continue
		}
		res.maxLag = max(res.maxLag, time.Duration(float64(n)/rate*float64(time.Second))-produceTick)
		var err error
		if items, err = s.jobs.pushItems(items, int(min(n, 5000))); err == nil {
			err = s.push.PushMany(ctx, items)
		}
		if err != nil {
			res.err = err
			return
		}
		s.pushed.Add(int64(len(items)))
		// The payloads are the database's now: dropping them keeps the
		// producer's share of the live heap to the batch in flight
		// (a 5,000-job catch-up batch would otherwise stay referenced).
		clear(items)
	}
	return
}
