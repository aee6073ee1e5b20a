package dashboard

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/fleet"
	"github.com/rs/zerolog"
)

// QueueCounts are one queue's rows by state.
type QueueCounts struct {
	Queue    string
	Ready    int64 // not reserved, available now
	Delayed  int64 // not reserved, available later
	Reserved int64 // reserved within retry_after
	Expired  int64 // reserved longer than retry_after: claimable again
	// OldestReady is how long the longest-waiting ready job has been
	// available (0 when none is ready).
	OldestReady time.Duration
}

// ClassCounts are the pending rows of one class on one queue.
type ClassCounts struct {
	Queue, Class                      string
	Ready, Delayed, Reserved, Expired int64
}

// ReservedJob is a reserved row: a job running now (or abandoned).
type ReservedJob struct {
	ID         int64
	Queue      string
	Class      string
	Attempts   int
	ReservedAt time.Time
	Expired    bool // past retry_after: another worker may take it
}

// DueJob is a delayed row and when it becomes available.
type DueJob struct {
	ID          int64
	Queue       string
	Class       string
	AvailableAt time.Time
}

// Bucket counts delayed rows by when they become available.
type Bucket struct {
	Label string
	Count int64
}

// Named is a count by name.
type Named struct {
	Name  string
	Count int64
}

// Summary is what the pages show of the tables, built after each refresh.
// It never changes once published.
type Summary struct {
	AsOf     time.Time
	Took     time.Duration // the refresh's reads
	Err      string        // the last refresh's error, secrets removed
	JobsRows int
	Queues   []QueueCounts
	Classes  []ClassCounts
	Reserved []ReservedJob // oldest reservation first, at most maxReservedShown
	// ReservedTotal counts every reserved row, shown or not.
	ReservedTotal int
	NextDue       []DueJob
	Schedule      []Bucket
	JobsPass      passState
	// JobsCaughtUp is false while the first read of the jobs table is
	// under way (large tables take several refreshes).
	JobsCaughtUp bool

	// Tags says whether the caches read the models jobs hold (off with
	// --hide-payloads); TagsDropped counts tags not kept because a cache
	// held maxDistinctTags.
	Tags        bool
	TagsDropped int64

	FailedTotal    int64
	FailedByClass  []Named
	FailedByQueue  []Named
	FailedCaughtUp bool
	FailedPass     passState

	Workers []fleet.WorkerRow
	Pauses  []fleet.Pause
	// FleetErr says why the fleet could not be read (laraworker's tables
	// missing, typically).
	FleetErr string
}

// idleAfter is how long after the last page view the snapshot slows
// down to IdleInterval.
const idleAfter = 2 * time.Minute

const (
	maxReservedShown = 1000
	maxDueShown      = 20
)

// Snapshot keeps the caches fresh in one goroutine and publishes a
// Summary after each refresh. Its reads take at most a tenth of the time
// (see Run), so a large table makes it refresh less often, never harder.
type Snapshot struct {
	src        *source
	jobs       *jobCache
	failed     *failedCache
	fleet      *fleet.Store
	retryAfter time.Duration
	log        zerolog.Logger
	clean      func(string) string
	now        func() time.Time

	// MinInterval is the shortest time between refreshes (default 2s);
	// IdleInterval the time between refreshes when no page was viewed
	// for 2 minutes and nothing else asked (default 30s).
	MinInterval, IdleInterval time.Duration
	budget                    refreshBudget
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

func (s *Snapshot) current() *Summary {
	now := s.now()
	if prev := s.viewed.Swap(now.UnixNano()); now.Sub(time.Unix(0, prev)) > idleAfter {
		// The first view after a quiet spell: refresh now rather than at
		// the end of the idle interval.
		s.kickRefresh()
	}
	if c := s.cur.Load(); c != nil {
		return c
	}
	return &Summary{}
}

// Refreshed waits for the next refresh to finish, asking for it now
// (after the dashboard changed the tables, and in tests).
func (s *Snapshot) Refreshed(ctx context.Context) error {
	ch := make(chan struct{})
	s.waitMu.Lock()
	s.waiters = append(s.waiters, ch)
	s.waitMu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
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
	err := s.jobs.refresh(ctx, s.src, s.budget, start)
	if err == nil {
		err = s.failed.refresh(ctx, s.src, s.budget.tailRows, s.budget.rollingFailed, start)
	}
	took := s.now().Sub(start)
	sum := s.summarize(start, took)
	if err != nil && ctx.Err() == nil {
		sum.Err = s.clean(err.Error())
		s.log.Warn().Str("error", sum.Err).Msg("dashboard: reading the queue tables failed")
	}
	workers, ferr := s.fleet.Workers(ctx)
	pauses, perr := s.fleet.Pauses(ctx)
	if ferr = cmp.Or(ferr, perr); ferr != nil {
		sum.FleetErr = s.clean(ferr.Error())
	}
	sum.Workers, sum.Pauses = workers, pauses
	s.cur.Store(sum)
	s.refreshN.Add(1)
	if s.OnRefresh != nil {
		s.OnRefresh(sum)
	}
	return took
}

// summarize counts the cached rows as of now.
func (s *Snapshot) summarize(now time.Time, took time.Duration) *Summary {
	sum := &Summary{AsOf: now, Took: took.Round(time.Millisecond)}
	s.jobs.mu.RLock()
	s.summarizeJobs(sum, now)
	s.jobs.mu.RUnlock()
	s.failed.mu.RLock()
	s.summarizeFailed(sum)
	s.failed.mu.RUnlock()
	return sum
}

func (s *Snapshot) summarizeJobs(sum *Summary, now time.Time) {
	c := s.jobs
	nowU := now.Unix()
	expiry := now.Add(-s.retryAfter).Unix()
	queues := make([]QueueCounts, len(c.queues.list))
	oldest := make([]int64, len(c.queues.list))
	classes := newClassTable(len(c.queues.list), len(c.classes.list))
	var due []DueJob
	buckets := []struct {
		label string
		until int64
	}{{"within a minute", nowU + 60}, {"within 10 minutes", nowU + 600}, {"within an hour", nowU + 3600},
		{"within a day", nowU + 86400}, {"later", 1 << 62}}
	counts := make([]int64, len(buckets))
	for _, r := range c.rows {
		if r.dead {
			continue
		}
		sum.JobsRows++
		cc := classes.get(r.queue, r.class)
		q := &queues[r.queue]
		switch {
		case r.reserved != 0 && int64(r.reserved) > expiry:
			q.Reserved++
			cc.Reserved++
		case r.reserved != 0:
			q.Expired++
			cc.Expired++
		case int64(r.available) <= nowU:
			q.Ready++
			cc.Ready++
			if oldest[r.queue] == 0 || int64(r.available) < oldest[r.queue] {
				oldest[r.queue] = int64(r.available)
			}
		default:
			q.Delayed++
			cc.Delayed++
			for i, b := range buckets {
				if int64(r.available) <= b.until {
					counts[i]++
					break
				}
			}
			if len(due) < maxDueShown || int64(r.available) < due[len(due)-1].AvailableAt.Unix() {
				due = appendDue(due, DueJob{ID: r.id, Queue: c.queues.name(uint32(r.queue)), Class: c.classes.name(r.class),
					AvailableAt: time.Unix(int64(r.available), 0)})
			}
		}
		if r.reserved != 0 {
			sum.ReservedTotal++
			if len(sum.Reserved) < maxReservedShown {
				sum.Reserved = append(sum.Reserved, ReservedJob{ID: r.id, Queue: c.queues.name(uint32(r.queue)), Class: c.classes.name(r.class),
					Attempts: int(r.attempts), ReservedAt: time.Unix(int64(r.reserved), 0), Expired: int64(r.reserved) <= expiry})
			}
		}
	}
	for i := range queues {
		queues[i].Queue = c.queues.name(uint32(i))
		if oldest[i] != 0 {
			queues[i].OldestReady = now.Sub(time.Unix(oldest[i], 0))
		}
		if queues[i] != (QueueCounts{Queue: queues[i].Queue}) {
			sum.Queues = append(sum.Queues, queues[i])
		}
	}
	slices.SortFunc(sum.Queues, func(a, b QueueCounts) int { return cmp.Compare(a.Queue, b.Queue) })
	for _, cc := range classes.all() {
		cc.Queue, cc.Class = c.queues.name(uint32(cc.q)), c.classes.name(cc.c)
		sum.Classes = append(sum.Classes, cc.ClassCounts)
	}
	slices.SortFunc(sum.Classes, func(a, b ClassCounts) int {
		return cmp.Or(cmp.Compare(a.Queue, b.Queue), cmp.Compare(b.Ready+b.Delayed, a.Ready+a.Delayed), cmp.Compare(a.Class, b.Class))
	})
	slices.SortFunc(sum.Reserved, func(a, b ReservedJob) int { return a.ReservedAt.Compare(b.ReservedAt) })
	for i, b := range buckets {
		sum.Schedule = append(sum.Schedule, Bucket{b.label, counts[i]})
	}
	sum.NextDue = due
	sum.JobsPass = c.pass
	sum.JobsCaughtUp = c.caughtUp
	if c.tags != nil {
		sum.Tags, sum.TagsDropped = true, c.tags.dropped
	}
}

// appendDue keeps the maxDueShown soonest delayed jobs, soonest first.
func appendDue(due []DueJob, j DueJob) []DueJob {
	if len(due) == maxDueShown && !j.AvailableAt.Before(due[len(due)-1].AvailableAt) {
		return due
	}
	i, _ := slices.BinarySearchFunc(due, j, func(a, b DueJob) int { return a.AvailableAt.Compare(b.AvailableAt) })
	due = slices.Insert(due, i, j)
	if len(due) > maxDueShown {
		due = due[:maxDueShown]
	}
	return due
}

func (s *Snapshot) summarizeFailed(sum *Summary) {
	c := s.failed
	byClass := map[uint32]int64{}
	byQueue := map[uint16]int64{}
	for _, r := range c.rows {
		if r.dead {
			continue
		}
		sum.FailedTotal++
		byClass[r.class]++
		byQueue[r.queue]++
	}
	for id, n := range byClass {
		sum.FailedByClass = append(sum.FailedByClass, Named{c.classes.name(id), n})
	}
	for id, n := range byQueue {
		sum.FailedByQueue = append(sum.FailedByQueue, Named{c.queues.name(uint32(id)), n})
	}
	byCount := func(a, b Named) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name)) }
	slices.SortFunc(sum.FailedByClass, byCount)
	slices.SortFunc(sum.FailedByQueue, byCount)
	sum.FailedCaughtUp = c.caughtUp
	sum.FailedPass = c.pass
	if c.tags != nil {
		sum.TagsDropped += c.tags.dropped
	}
}

// readTags turns the reading of tags on (before Run): the tail reads
// then return the payloads that hold models.
func (s *Snapshot) readTags() {
	s.src.tags = true
	s.jobs.tags, s.failed.tags = newTagSet(), newTagSet()
}

// NewSnapshot builds the caches of the queue's tables and fl's; clean
// removes secrets from error texts before they are logged or shown.
func NewSnapshot(t Tables, fl *fleet.Store, log zerolog.Logger, clean func(string) string) *Snapshot {
	if clean == nil {
		clean = func(s string) string { return s }
	}
	return &Snapshot{
		src: newSource(t), jobs: newJobCache(), failed: newFailedCache(), fleet: fl,
		retryAfter: t.RetryAfter, log: log, clean: clean, now: time.Now,
		MinInterval: 2 * time.Second, IdleInterval: 30 * time.Second, budget: defaultBudget,
		kick: make(chan struct{}, 1),
	}
}

// classTable counts rows per (queue, class) without hashing each row: a
// slice per queue indexed by class id, or a map when the product of the
// two would be too large.
type classTable struct {
	dense  [][]classCell
	sparse map[uint64]*classCell
	nc     int
}

type classCell struct {
	ClassCounts
	q    uint16
	c    uint32
	used bool
}

func newClassTable(queues, classes int) *classTable {
	t := &classTable{nc: classes}
	if queues*classes <= 1<<20 {
		t.dense = make([][]classCell, queues)
	} else {
		t.sparse = map[uint64]*classCell{}
	}
	return t
}

func (t *classTable) get(q uint16, c uint32) *ClassCounts {
	var cell *classCell
	if t.dense != nil {
		if t.dense[q] == nil {
			t.dense[q] = make([]classCell, t.nc)
		}
		cell = &t.dense[q][c]
	} else {
		k := uint64(q)<<32 | uint64(c)
		if cell = t.sparse[k]; cell == nil {
			cell = &classCell{}
			t.sparse[k] = cell
		}
	}
	if !cell.used {
		cell.used, cell.q, cell.c = true, q, c
	}
	return &cell.ClassCounts
}

func (t *classTable) all() []*classCell {
	var out []*classCell
	for _, row := range t.dense {
		for i := range row {
			if row[i].used {
				out = append(out, &row[i])
			}
		}
	}
	for _, cell := range t.sparse {
		out = append(out, cell)
	}
	return out
}
