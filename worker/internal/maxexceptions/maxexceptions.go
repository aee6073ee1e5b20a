// Package maxexceptions counts a job's exceptions against its
// maxExceptions, as Laravel's Worker::markJobAsFailedIfWillExceedMaxExceptions
// does: in the app's cache under the `job-exceptions:<uuid>` keys PHP
// workers use, so PHP and Go count the same exceptions.
package maxexceptions

import (
	"context"
	"sync"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
)

// Counter stores maxExceptions counters by job uuid, as
// Laravel's `job-exceptions:<uuid>` cache keys do.
type Counter interface {
	// Increment adds one and returns the new count.
	Increment(ctx context.Context, uuid string) (int64, error)
	// Forget drops the counter.
	Forget(ctx context.Context, uuid string) error
}

// memoryCounter is a Counter for one process; entries expire
// after a day, as Laravel's do.
type memoryCounter struct {
	mu sync.Mutex
	m  map[string]counterEntry
}

type counterEntry struct {
	n       int64
	expires time.Time
}

func newMemoryCounter() *memoryCounter { return &memoryCounter{m: map[string]counterEntry{}} }

func (c *memoryCounter) Increment(_ context.Context, uuid string) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	e := c.m[uuid]
	if e.expires.Before(now) {
		e = counterEntry{expires: now.Add(24 * time.Hour)}
	}
	e.n++
	c.m[uuid] = e
	if len(c.m) > maxMemoryCounters {
		c.sweep(now)
	}
	return e.n, nil
}

func (c *memoryCounter) Forget(_ context.Context, uuid string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, uuid)
	return nil
}

// CacheCounter keeps the counters in the app's database cache store, under
// the keys PHP workers use, so PHP and Go count the same exceptions.
type CacheCounter struct{ Cache jobqueue.Cache }

func exceptionsKey(uuid string) string { return "job-exceptions:" + uuid }

// Increment follows Worker::markJobAsFailedIfWillExceedMaxExceptions: the
// counter is created at 0 for a day when missing, then incremented.
func (c CacheCounter) Increment(ctx context.Context, uuid string) (int64, error) {
	key := exceptionsKey(uuid)
	v, ok, err := c.Cache.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	if !ok || phpFalsy(v) {
		if err := c.Cache.Put(ctx, key, []byte("i:0;"), 24*time.Hour); err != nil {
			return 0, err
		}
	}
	n, _, err := c.Cache.Increment(ctx, key)
	return n, err
}

// Forget drops the counter.
func (c CacheCounter) Forget(ctx context.Context, uuid string) error {
	return c.Cache.Forget(ctx, exceptionsKey(uuid))
}

// phpFalsy is `! $value` for the serialized scalars a counter can hold.
func phpFalsy(v []byte) bool {
	switch string(v) {
	case "i:0;", "b:0;", "N;", `s:0:"";`, `s:1:"0";`, "d:0;":
		return true
	}
	return false
}

// maxMemoryCounters bounds the in-process counters. Past it, expired
// entries go first, then arbitrary ones: a forgotten counter restarts at
// zero (the job may get a few more exceptions than maxExceptions says),
// which beats a worker whose memory grows with every failing job.
const maxMemoryCounters = 100000

func (c *memoryCounter) sweep(now time.Time) {
	for k, e := range c.m {
		if e.expires.Before(now) {
			delete(c.m, k)
		}
	}
	for k := range c.m {
		if len(c.m) <= maxMemoryCounters/2 {
			break
		}
		delete(c.m, k)
	}
}

// Counts is markJobAsFailedIfWillExceedMaxExceptions's counting: in the
// shared counter, or in this process's memory while the shared one is
// unreachable.
type Counts struct {
	shared   Counter
	fallback *memoryCounter
	log      zerolog.Logger
}

// New counts in shared, else in cache (CacheCounter), else in this
// process's memory.
func New(shared Counter, cache jobqueue.Cache, log zerolog.Logger) *Counts {
	c := &Counts{shared: shared, fallback: newMemoryCounter(), log: log}
	if c.shared == nil {
		if cache != nil {
			c.shared = CacheCounter{Cache: cache}
		} else {
			c.shared = c.fallback
		}
	}
	return c
}

// Exceeded counts this exception of p's job and reports whether
// maxExceptions is reached.
func (c *Counts) Exceeded(ctx context.Context, p *payload.Payload) bool {
	if p.MaxExceptions == nil || p.UUID == "" {
		return false
	}
	n, err := c.shared.Increment(ctx, p.UUID)
	if err != nil {
		// The shared counter is unreachable: count in this process rather
		// than never failing the job.
		c.log.Error().Err(err).Str("uuid", p.UUID).Msg("maxExceptions counter unavailable; counting in memory")
		n, _ = c.fallback.Increment(ctx, p.UUID)
	}
	if *p.MaxExceptions <= n {
		_ = c.shared.Forget(ctx, p.UUID)
		_ = c.fallback.Forget(ctx, p.UUID)
		return true
	}
	return false
}
