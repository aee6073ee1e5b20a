// Package batchlookup reads Laravel's job batches for the worker: whether
// a batch has PHP callbacks or allows failures, and what a failed member
// records in it.
package batchlookup

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Info is what the worker needs to know of a batch's options.
type Info struct {
	// Callbacks: the batch has then/catch/finally/progress/before/failure
	// callbacks, PHP closures.
	Callbacks     bool
	AllowFailures bool
}

// Lookup reads Laravel's batches and remembers the options of those
// seen, so each batch's are parsed once. The memory is bounded: a worker
// meets an unbounded number of batches over its life, and forgetting one
// only costs a re-parse.
type Lookup struct {
	repo jobqueue.Batches
	mu   sync.Mutex
	m    map[string]Info
}

const maxCachedBatches = 1024

// New is nil when there is no batch repository.
func New(repo jobqueue.Batches) *Lookup {
	if repo == nil {
		return nil
	}
	return &Lookup{repo: repo}
}

// Find reads the batch and its options.
func (l *Lookup) Find(ctx context.Context, id string) (jobqueue.Batch, Info, error) {
	b, err := l.repo.FindBatch(ctx, id)
	if err != nil {
		return b, Info{}, err
	}
	return b, l.info(b), nil
}

func (l *Lookup) info(b jobqueue.Batch) Info {
	if info, ok := l.Cached(b.ID); ok {
		return info
	}
	info := parseBatchOptions(b.Options)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) >= maxCachedBatches {
		l.m = make(map[string]Info)
	}
	l.m[b.ID] = info
	return info
}

// Cached is the batch's options as last read, if remembered.
func (l *Lookup) Cached(id string) (Info, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	info, ok := l.m[id]
	return info, ok
}

// Forget drops the options remembered: each batch's are read again on
// next use.
func (l *Lookup) Forget() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m = nil
}

// Failure is what a failed job records in its batch, computed when the
// failure is written (and again if that write is retried): the batch
// options may have to be read first, and a read that fails must not lose
// the failure (Laravel's batch would then never finish).
func (l *Lookup) Failure(id, jobUUID string) func(ctx context.Context) (*jobqueue.BatchEntry, error) {
	return func(ctx context.Context) (*jobqueue.BatchEntry, error) {
		info, ok := l.Cached(id)
		if !ok {
			var err error
			_, info, err = l.Find(ctx, id)
			if errors.Is(err, jobqueue.ErrBatchNotFound) {
				return nil, nil // gone: nothing to count, as Laravel's null batch()
			}
			if err != nil {
				return nil, fmt.Errorf("reading batch %s: %w", id, err)
			}
		}
		return &jobqueue.BatchEntry{ID: id, JobUUID: jobUUID, AllowFailures: info.AllowFailures}, nil
	}
}

// parseBatchOptions reads the PHP-serialized options array: any non-empty
// callback list means PHP must run the batch's jobs.
func parseBatchOptions(raw []byte) Info {
	var info Info
	if len(raw) == 0 {
		return info
	}
	v, err := phpserialize.Unserialize(raw)
	if err != nil || v.Kind != phpserialize.KindArray {
		// Unknown options: be safe and leave the batch to PHP.
		return Info{Callbacks: true}
	}
	for _, e := range v.Entries {
		val := e.Value.Deref()
		switch e.Key.Str {
		case "allowFailures":
			info.AllowFailures = val.Kind == phpserialize.KindBool && val.Bool
		case "then", "catch", "finally", "progress", "before", "failure":
			if val.Kind == phpserialize.KindArray && len(val.Entries) > 0 {
				info.Callbacks = true
			}
		}
	}
	return info
}
