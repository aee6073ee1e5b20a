package redisjobs

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/redisproto"
)

// Options bound what a refresh reads. The zero value is the default.
type Options struct {
	// Queues are watched whatever the scan finds: the connection's
	// default queue and the queues the caller serves.
	Queues []string
	// Head is how many jobs of each queue's list and delayed set a
	// refresh reads (default 100).
	Head int
	// ScanCount is how many keys one refresh's SCAN step examines on each
	// node (default 1000).
	ScanCount int64
	// MaxQueues bounds the queues watched (default 1000).
	MaxQueues int
}

const (
	// prefixLen and suffixLen are what a refresh keeps of a listed job:
	// Laravel writes uuid and displayName first, createdAt, id, attempts
	// and delay last.
	prefixLen = 400
	suffixLen = 200
	// modelMarker is in every payload whose command holds a model.
	modelMarker = "ModelIdentifier"
)

// Source is a Redis queue connection's pending jobs for a snapshot. It is
// safe for concurrent use.
type Source struct {
	q          *redisproto.Queue
	opt        Options
	retryAfter time.Duration
	expires    bool // false: retry_after null (reservations never expire)
	now        func() time.Time

	// scan and the fields below it are the refreshing goroutine's.
	scan     redisproto.QueueScan
	scanPass snapshot.PassState

	mu       sync.RWMutex
	tags     bool
	queues   map[string]*queueView
	caughtUp bool // a scan pass ended: every queue has been found
	pass     snapshot.PassState
}

// queueView is one queue as the last refresh read it.
type queueView struct {
	counts  redisproto.Counts
	dueBy   []int64 // delayed jobs due by each bucket's end but the last
	at      time.Time
	ready   []entry // the list's first jobs, in pop order
	delayed []entry // the delayed set's first jobs, soonest first
	// reserved are the reservations read (earliest expiry first), within
	// the refresh's budget for all queues.
	reserved []entry
	// seen is when the refreshes first saw each of the list's first jobs
	// (by uuid): a lower bound of its wait when its payload has no
	// createdAt.
	seen map[string]time.Time
}

// New is the source on q.
func New(q *redisproto.Queue, opt Options) *Source {
	if opt.Head <= 0 {
		opt.Head = 100
	}
	if opt.ScanCount <= 0 {
		opt.ScanCount = 1000
	}
	if opt.MaxQueues <= 0 {
		opt.MaxQueues = 1000
	}
	cfg := q.Config()
	return &Source{q: q, opt: opt, retryAfter: cfg.RetryAfter, expires: !cfg.NeverExpire, now: q.Now,
		queues: map[string]*queueView{}}
}

var _ snapshot.JobSource = (*Source)(nil)

// ReadTags makes the refreshes read whole the first jobs that hold a
// model, for their tags.
func (s *Source) ReadTags() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tags = true
}

// Refresh takes a step of the scan for queues, then peeks at every queue
// watched.
func (s *Source) Refresh(ctx context.Context, now time.Time, known []string) error {
	names, scanErr := s.discover(ctx, now, known)
	s.mu.RLock()
	withTags := s.tags
	s.mu.RUnlock()
	buckets := snapshot.DelayBuckets(now)
	var dueBy []int64
	for _, b := range buckets[:len(buckets)-1] {
		dueBy = append(dueBy, b.Until)
	}
	opts := redisproto.PeekOptions{Head: s.opt.Head, Prefix: prefixLen, Suffix: suffixLen, DueBy: dueBy}
	if withTags {
		opts.Whole = modelMarker
	}
	reservedLeft := snapshot.MaxReservedShown
	views := map[string]*queueView{}
	var errs []error
	for _, name := range names {
		opts.Reserved = reservedLeft
		v, err := s.q.Peek(ctx, name, opts)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			errs = append(errs, err)
			continue
		}
		reservedLeft -= len(v.Reserved)
		views[name] = s.toView(name, v, now, withTags)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, v := range views {
		if v.counts == (redisproto.Counts{}) && !slices.Contains(s.opt.Queues, name) && !slices.Contains(known, name) {
			delete(s.queues, name) // emptied: its keys are gone
			continue
		}
		s.queues[name] = v
	}
	for name := range s.queues {
		if _, read := views[name]; !read && !slices.Contains(names, name) {
			delete(s.queues, name)
		}
	}
	return errors.Join(append([]error{scanErr}, errs...)...)
}

// discover takes one step of the scan and returns the queues to read:
// those watched already, found now, named by Options.Queues or known.
func (s *Source) discover(ctx context.Context, now time.Time, known []string) ([]string, error) {
	if s.scanPass.Started.IsZero() {
		s.scanPass.Started = now
	}
	found, done, err := s.q.ScanQueues(ctx, &s.scan, s.opt.ScanCount)
	s.mu.Lock()
	if done {
		s.caughtUp = true
		s.scanPass.LastDone, s.scanPass.LastTook = now, now.Sub(s.scanPass.Started)
		s.pass = s.scanPass
		s.scanPass.Started = time.Time{}
	}
	names := append(append(append(slices.Clone(s.opt.Queues), known...), found...), slices.Collect(maps.Keys(s.queues))...)
	s.mu.Unlock()
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) > s.opt.MaxQueues {
		names = names[:s.opt.MaxQueues]
	}
	return names, err
}

// toView decodes a queue's peek, carrying over when its first jobs were
// first seen.
func (s *Source) toView(name string, v redisproto.View, now time.Time, withTags bool) *queueView {
	qv := &queueView{counts: v.Counts, dueBy: v.DueBy, at: now, seen: map[string]time.Time{}}
	s.mu.RLock()
	prev := s.queues[name]
	s.mu.RUnlock()
	for _, p := range v.Ready {
		e := fromList(p, withTags)
		qv.ready = append(qv.ready, e)
		qv.seen[e.uuid] = now
		if prev != nil {
			if t, ok := prev.seen[e.uuid]; ok {
				qv.seen[e.uuid] = t
			}
		}
	}
	for _, p := range v.Delayed {
		qv.delayed = append(qv.delayed, fromList(p, withTags))
	}
	for _, p := range v.Reserved {
		qv.reserved = append(qv.reserved, fromReserved(p, withTags))
	}
	return qv
}
