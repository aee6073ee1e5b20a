package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/phpserialize"
)

// batchInfo is what the worker needs to know of a batch's options.
type batchInfo struct {
	callbacks     bool
	allowFailures bool
}

// batchLookup reads Laravel's batches and remembers the options of those
// seen, so each batch's are parsed once. The memory is bounded: a worker
// meets an unbounded number of batches over its life, and forgetting one
// only costs a re-parse.
type batchLookup struct {
	repo jobqueue.Batches
	mu   sync.Mutex
	m    map[string]batchInfo
}

const maxCachedBatches = 1024

// newBatchLookup is nil when there is no batch repository.
func newBatchLookup(repo jobqueue.Batches) *batchLookup {
	if repo == nil {
		return nil
	}
	return &batchLookup{repo: repo}
}

// find reads the batch and its options.
func (l *batchLookup) find(ctx context.Context, id string) (jobqueue.Batch, batchInfo, error) {
	b, err := l.repo.FindBatch(ctx, id)
	if err != nil {
		return b, batchInfo{}, err
	}
	return b, l.info(b), nil
}

func (l *batchLookup) info(b jobqueue.Batch) batchInfo {
	if info, ok := l.cached(b.ID); ok {
		return info
	}
	info := parseBatchOptions(b.Options)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) >= maxCachedBatches {
		l.m = make(map[string]batchInfo)
	}
	l.m[b.ID] = info
	return info
}

func (l *batchLookup) cached(id string) (batchInfo, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	info, ok := l.m[id]
	return info, ok
}

// failure is what a failed job records in its batch, computed when the
// failure is written (and again if that write is retried): the batch
// options may have to be read first, and a read that fails must not lose
// the failure (Laravel's batch would then never finish).
func (l *batchLookup) failure(id, jobUUID string) func(ctx context.Context) (*jobqueue.BatchEntry, error) {
	return func(ctx context.Context) (*jobqueue.BatchEntry, error) {
		info, ok := l.cached(id)
		if !ok {
			var err error
			_, info, err = l.find(ctx, id)
			if errors.Is(err, jobqueue.ErrBatchNotFound) {
				return nil, nil // gone: nothing to count, as Laravel's null batch()
			}
			if err != nil {
				return nil, fmt.Errorf("reading batch %s: %w", id, err)
			}
		}
		return &jobqueue.BatchEntry{ID: id, JobUUID: jobUUID, AllowFailures: info.allowFailures}, nil
	}
}

// parseBatchOptions reads the PHP-serialized options array: any non-empty
// callback list means PHP must run the batch's jobs.
func parseBatchOptions(raw []byte) batchInfo {
	var info batchInfo
	if len(raw) == 0 {
		return info
	}
	v, err := phpserialize.Unserialize(raw)
	if err != nil || v.Kind != phpserialize.KindArray {
		// Unknown options: be safe and leave the batch to PHP.
		return batchInfo{callbacks: true}
	}
	for _, e := range v.Entries {
		val := e.Value.Deref()
		switch e.Key.Str {
		case "allowFailures":
			info.allowFailures = val.Kind == phpserialize.KindBool && val.Bool
		case "then", "catch", "finally", "progress", "before", "failure":
			if val.Kind == phpserialize.KindArray && len(val.Entries) > 0 {
				info.callbacks = true
			}
		}
	}
	return info
}
