package snapshot

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/rs/zerolog"
)

// Tables says where the snapshot reads Laravel's tables in the app's
// database.
type Tables struct {
	// DB is the pool on the app's database and Dialect its engine's SQL
	// (sqldb.Dialect).
	DB      *sql.DB
	Dialect fleet.Dialect
	// Jobs and Failed are the jobs and failed_jobs tables (with the
	// connection's table prefix). Jobs is "" for a queue whose jobs are
	// elsewhere (Redis): Config.Jobs reads them.
	Jobs, Failed string
	// Location is the app's timezone (failed_at is written in it).
	Location *time.Location
	// RetryAfter is the connection's retry_after.
	RetryAfter time.Duration
}

// Config is what New needs.
type Config struct {
	// Tables are failed_jobs (always in the app's database) and, when
	// Jobs is nil, the jobs table of a database queue.
	Tables Tables
	// Jobs reads the pending jobs of a queue that is not a jobs table
	// (redisjobs.New); nil: SQLJobs(Tables).
	Jobs JobSource
	// Fleet reads laraworker's workers and pauses.
	Fleet *fleet.Store
	// PauseCache is the app's default cache store, where Laravel keeps
	// its queue pauses (php artisan queue:pause, 12.40+; --all, 13.25+),
	// and Connection the queue connection they are read for; nil: none
	// are shown.
	PauseCache jobqueue.Cache
	Connection string
	Logger     zerolog.Logger
	// Clean removes secrets from error texts before they are logged or
	// shown; nil keeps them as they are.
	Clean func(string) string
}

// idleAfter is how long after the last page view the snapshot slows
// down to IdleInterval.
const idleAfter = 2 * time.Minute

// Snapshot keeps the caches fresh in one goroutine and publishes a
// Summary after each refresh. Its reads take at most a tenth of the time
// (see Run), so a large queue makes it refresh less often, never harder.
type Snapshot struct {
	jobs   JobSource
	failed *failedCache
	table  *FailedTable
	fleet  *fleet.Store
	pauses laravelPauses
	log    zerolog.Logger
	clean  func(string) string
	now    func() time.Time

	// MinInterval is the shortest time between refreshes (default 2s);
	// IdleInterval the time between refreshes when no page was viewed
	// for 2 minutes and nothing else asked (default 30s).
	MinInterval, IdleInterval time.Duration
	failedBudget              failedBudget
	// AlwaysOn refreshes at full rate with nobody watching (metrics).
	AlwaysOn bool
	// OnRefresh runs after each published summary (metrics gauges).
	OnRefresh func(*Summary)

	cur      atomic.Pointer[Summary]
	viewed   atomic.Int64
	kick     chan struct{}
	waitMu   sync.Mutex
	waiters  []chan struct{}
	refreshN atomic.Int64
}

// New builds the snapshot of a queue: its pending jobs through cfg.Jobs
// (or the jobs table), failed_jobs and the fleet's tables. Run it.
func New(cfg Config) (*Snapshot, error) {
	t := cfg.Tables
	switch {
	case t.DB == nil || t.Dialect == nil || t.Failed == "":
		return nil, errors.New("snapshot: New needs the app's database and its failed_jobs table (Tables)")
	case cfg.Fleet == nil:
		return nil, errors.New("snapshot: New needs a fleet store")
	case cfg.Jobs == nil && t.Jobs == "":
		return nil, errors.New("snapshot: New needs a JobSource, or the jobs table of a database queue (Tables.Jobs)")
	}
	clean := cfg.Clean
	if clean == nil {
		clean = func(s string) string { return s }
	}
	jobs := cfg.Jobs
	if jobs == nil {
		jobs = SQLJobs(t)
	}
	return &Snapshot{
		jobs: jobs, failed: newFailedCache(), table: newFailedTable(t), fleet: cfg.Fleet,
		pauses: laravelPauses{cache: cfg.PauseCache, connection: cfg.Connection},
		log:    cfg.Logger, clean: clean, now: time.Now,
		MinInterval: 2 * time.Second, IdleInterval: 30 * time.Second, failedBudget: defaultFailedBudget,
		kick: make(chan struct{}, 1),
	}, nil
}

// Current is the last published summary (an empty one before the first
// refresh). It counts as a page view: the first after a quiet spell asks
// for a refresh at once.
func (s *Snapshot) Current() *Summary {
	now := s.now()
	if prev := s.viewed.Swap(now.UnixNano()); now.Sub(time.Unix(0, prev)) > idleAfter {
		s.Kick()
	}
	if c := s.cur.Load(); c != nil {
		return c
	}
	return &Summary{}
}

// Kick asks for a refresh now, without waiting for it.
func (s *Snapshot) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Refreshed waits for the next refresh to finish, asking for it now
// (after the dashboard changed the tables, and in tests).
func (s *Snapshot) Refreshed(ctx context.Context) error {
	ch := make(chan struct{})
	s.waitMu.Lock()
	s.waiters = append(s.waiters, ch)
	s.waitMu.Unlock()
	s.Kick()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run refreshes until ctx ends.
func (s *Snapshot) Run(ctx context.Context) {
	for {
		// Waiters registered before the refresh starts see its result.
		s.waitMu.Lock()
		waiting := s.waiters
		s.waiters = nil
		s.waitMu.Unlock()
		took := s.refreshOnce(ctx)
		for _, ch := range waiting {
			close(ch)
		}
		wait := max(s.MinInterval, 9*took) // reads take <= 10% of the time
		if !s.AlwaysOn && s.now().Sub(time.Unix(0, s.viewed.Load())) > idleAfter {
			wait = max(wait, s.IdleInterval)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			s.releaseWaiters()
			return
		case <-s.kick:
		case <-t.C:
		}
		t.Stop()
	}
}

func (s *Snapshot) releaseWaiters() {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	for _, ch := range s.waiters {
		close(ch)
	}
	s.waiters = nil
}

func (s *Snapshot) refreshOnce(ctx context.Context) time.Duration {
	start := s.now()
	workers, ferr := s.fleet.Workers(ctx)
	pauses, perr := s.fleet.Pauses(ctx)
	err := s.jobs.Refresh(ctx, start, knownQueues(workers, pauses))
	if err == nil {
		err = s.failed.refresh(ctx, s.table, s.failedBudget, start)
	}
	took := s.now().Sub(start)
	sum := &Summary{AsOf: start, Took: took.Round(time.Millisecond)}
	s.jobs.Summarize(sum, start)
	s.failed.summarize(sum)
	if err != nil && ctx.Err() == nil {
		sum.Err = s.clean(err.Error())
		s.log.Warn().Str("error", sum.Err).Msg("dashboard: reading the queue failed")
	}
	if ferr = cmp.Or(ferr, perr); ferr != nil {
		sum.FleetErr = s.clean(ferr.Error())
	}
	sum.Workers, sum.Pauses = workers, pauses
	s.pauses.summarize(ctx, sum, s.clean)
	s.cur.Store(sum)
	s.refreshN.Add(1)
	if s.OnRefresh != nil {
		s.OnRefresh(sum)
	}
	return took
}

// knownQueues are the queues the running workers watch and the paused
// ones.
func knownQueues(workers []fleet.WorkerRow, pauses []fleet.Pause) []string {
	var out []string
	for _, w := range workers {
		if w.StoppedAt == nil {
			out = append(out, w.Queues...)
		}
	}
	for _, p := range pauses {
		if p.Scope == fleet.ScopeQueue {
			out = append(out, p.Target)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ReadTags turns the reading of tags on (before Run): the caches then
// keep the models the jobs and failed jobs hold.
func (s *Snapshot) ReadTags() {
	s.jobs.ReadTags()
	s.table.tags = true
	s.failed.tags = newTagSet()
}

// Jobs is the source of the pending jobs (the jobs pages' lists).
func (s *Snapshot) Jobs() JobSource { return s.jobs }

// Failed reads failed_jobs rows (the failed pages).
func (s *Snapshot) Failed() *FailedTable { return s.table }

// Location is the app's timezone, in which failed_at is written.
func (s *Snapshot) Location() *time.Location { return s.table.loc }
