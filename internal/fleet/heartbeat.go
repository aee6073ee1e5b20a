package fleet

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/procmem"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/rs/zerolog"
)

// Controlled is what a heartbeat needs of a worker: *worker.Worker.
type Controlled interface {
	Stats() jobqueue.WorkerStats
	Pause()
	Resume()
	PauseQueues([]string)
}

// Heartbeat records one Go worker in the workers table, applies the
// pause requests of the pauses table to it and writes its outcome counts
// to the history table.
type Heartbeat struct {
	// Store is where the rows go.
	Store *Store
	// Worker is the worker to report on and control.
	Worker Controlled
	// Counts are the worker's outcomes by class (worker.Config.Written);
	// nil writes no history.
	Counts *Counts
	// Concurrency and Version are reported as they are.
	Concurrency int
	Version     string
	// Every is how often the row is written (default 5s); PollEvery how
	// often, at most, the pauses are read (default 1s). The worker's
	// claim loop asks for both when they are due
	// (worker.Config.BeforeClaim calling ReadPausesSoon), so that they
	// happen in the wake-up of its claims rather than on timers of their
	// own, each of which would wake an idle worker once more; a worker
	// that claims nothing for Every + PollEvery (a loop waiting for a free
	// place, or on Redis for a push) is beaten for, and its pauses read,
	// by Run's own timer then.
	Every, PollEvery time.Duration
	Logger           zerolog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time

	id, host  string
	started   time.Time
	lastPrune time.Time

	warned  map[string]bool
	applied appliedPauses
	// lastRead and lastBeat are when the pauses were last read and the
	// row last written (UnixNano): Run writes them, the claim loop's
	// ReadPausesSoon reads them.
	lastRead, lastBeat atomic.Int64
	// readSoon carries ReadPausesSoon's requests to Run.
	readSoon chan struct{}
}

// appliedPauses is the pause state last taken from the table, so only
// changes are applied: a SIGUSR2 pause is not undone by a table without
// rows.
type appliedPauses struct {
	worker bool
	queues []string
	read   bool
}

// ID is the worker's row id, known once Run started.
func (h *Heartbeat) ID() string { return h.id }

// Start prepares the identity and writes the first row at once, so the
// worker is listed (and pausable) before its first claim.
func (h *Heartbeat) Start(ctx context.Context) {
	if h.Now == nil {
		h.Now = time.Now
	}
	h.Every = cmpOr(h.Every, 5*time.Second)
	h.PollEvery = cmpOr(h.PollEvery, time.Second)
	h.started = h.Now()
	h.readSoon = make(chan struct{}, 1)
	h.host, _ = os.Hostname()
	h.id = fmt.Sprintf("go:%s:%d:%d", h.host, os.Getpid(), h.started.Unix())
	h.warned = map[string]bool{}
	h.beat(ctx)
	h.poll(ctx)
}

// Run beats and polls until ctx ends, then marks the row stopped and
// writes the last counts. Call Start first.
func (h *Heartbeat) Run(ctx context.Context) {
	// The fallback for a worker that claims nothing: a claiming one asks
	// for its beats (ReadPausesSoon) before this fires.
	fallback := time.NewTimer(h.Every + h.PollEvery)
	defer fallback.Stop()
	for {
		select {
		case <-ctx.Done():
			h.stop()
			return
		case <-h.readSoon:
			h.pollIfStale(ctx)
			if since(h.Now(), &h.lastBeat) < h.Every {
				continue
			}
		case <-fallback.C:
			h.pollIfStale(ctx)
		}
		h.beat(ctx)
		fallback.Reset(h.Every + h.PollEvery)
	}
}

// ReadPausesSoon asks Run to read and apply the pause requests when the
// last read is PollEvery old or more, and to write the row when the last
// beat is Every old or more (see Every), and returns at once: a claim
// loop must not wait on laraworker's tables, whose database may be slow
// or down while the queue is not. Nothing before Start.
func (h *Heartbeat) ReadPausesSoon(context.Context) {
	if h.readSoon == nil {
		return
	}
	if now := h.Now(); since(now, &h.lastRead) < h.PollEvery && since(now, &h.lastBeat) < h.Every {
		return
	}
	select {
	case h.readSoon <- struct{}{}:
	default: // a request is already waiting
	}
}

// stale says that the last read of the pauses is PollEvery old or more.
func (h *Heartbeat) stale() bool { return since(h.Now(), &h.lastRead) >= h.PollEvery }

// since is how long before now the time in last (UnixNano) was.
func since(now time.Time, last *atomic.Int64) time.Duration {
	return now.Sub(time.Unix(0, last.Load()))
}

func (h *Heartbeat) pollIfStale(ctx context.Context) {
	if h.stale() {
		h.poll(ctx)
	}
}

// stop writes the final state with a short deadline of its own: the
// worker's context is already over.
func (h *Heartbeat) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.beat(ctx)
	h.check("marking the worker stopped", h.Store.MarkStopped(ctx, h.id, h.Now().Unix()))
}

func (h *Heartbeat) beat(ctx context.Context) {
	now := h.Now()
	h.lastBeat.Store(now.UnixNano())
	st := h.Worker.Stats()
	row := WorkerRow{
		ID: h.id, Kind: KindGo, Name: st.Name, Host: h.host, PID: int64(os.Getpid()), Queues: st.Queues,
		Concurrency: int64(h.Concurrency), StartedAt: h.started.Unix(), LastSeenAt: now.Unix(),
		Done: st.Done, Failed: st.Failed, Released: st.Released, Returned: st.Returned, MemoryBytes: procmem.RSS(),
		Paused: st.Paused, PausedQs: st.PausedQueues, Version: h.Version,
	}
	for _, r := range st.Running {
		row.Running = append(row.Running, RunningJob{ID: r.ID, UUID: r.UUID, Class: r.Class, Queue: r.Queue,
			Attempt: r.Attempt, Since: r.Since.Unix()})
	}
	h.check("writing the worker's heartbeat", h.Store.UpsertWorker(ctx, row))
	if h.Counts != nil {
		rows := h.Counts.take()
		if err := h.Store.AddHistory(ctx, rows); err != nil {
			h.Counts.putBack(rows)
			h.check("writing job history", err)
		}
		h.checkTimings(ctx)
		recent := h.Counts.takeRecent()
		if err := h.Store.PutRecent(ctx, h.id, recent); err != nil {
			h.Counts.putBackRecent(recent)
			h.check("writing recent jobs", err)
		}
	}
	if now.Sub(h.lastPrune) > 10*time.Minute {
		h.lastPrune = now
		h.check("pruning old history", h.Store.Prune(ctx, now))
	}
}

// checkTimings warns once when the history table lacks the runtime and
// wait columns (tables of an earlier version), which are then not
// recorded.
func (h *Heartbeat) checkTimings(ctx context.Context) {
	ok, err := h.Store.TimingColumns(ctx)
	if h.firstWarning("timings", err == nil && !ok) {
		h.Logger.Warn().Str("table", h.Store.Tables().History).
			Msg("laraworker's history table has no runtime and wait columns (made by an earlier version): run `laraworker tables` to add them; until then runtimes and waits are not recorded")
	}
}

// poll reads the pause requests and applies what changed since the last
// read: a worker pause or resume, and the paused subset of its queues.
func (h *Heartbeat) poll(ctx context.Context) {
	h.lastRead.Store(h.Now().UnixNano())
	pauses, err := h.Store.Pauses(ctx)
	if err != nil {
		h.check("reading pause requests", err)
		return
	}
	st := h.Worker.Stats()
	var paused bool
	var queues []string
	for _, p := range pauses {
		switch {
		case p.Scope == ScopeWorker && p.Target == h.id:
			paused = true
		case p.Scope == ScopeQueue && slices.Contains(st.Queues, p.Target):
			queues = append(queues, p.Target)
		}
	}
	first := !h.applied.read
	if paused != h.applied.worker || (first && paused) {
		if paused {
			h.Worker.Pause()
		} else {
			h.Worker.Resume()
		}
	}
	if !slices.Equal(queues, h.applied.queues) || (first && len(queues) > 0) {
		h.Worker.PauseQueues(queues)
		h.Logger.Info().Strs("queues", queues).Msg("paused queues set from the dashboard")
	}
	h.applied = appliedPauses{worker: paused, queues: queues, read: true}
}

// check logs a failed write once per kind until it succeeds again: a
// missing table (`laraworker tables` not run) must not flood the log nor
// stop the worker.
func (h *Heartbeat) check(what string, err error) {
	if h.firstWarning(what, err != nil) {
		h.Logger.Warn().Err(err).Msg(what + " failed (run `laraworker tables` to create laraworker's tables); the worker goes on")
	}
}

// firstWarning records whether the problem what holds now and reports
// whether it just began (the one time to warn).
func (h *Heartbeat) firstWarning(what string, holds bool) bool {
	if !holds {
		delete(h.warned, what)
		return false
	}
	if h.warned[what] {
		return false
	}
	h.warned[what] = true
	return true
}

func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
