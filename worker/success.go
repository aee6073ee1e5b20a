package worker

import (
	"context"
	"errors"
	"sync"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel"
	"github.com/laraworker/laraworker/payload"
	"github.com/laraworker/laraworker/phpserialize"
)

// succeed is CallQueuedHandler's success path, in its order: push the next
// link of a chain, record the batch success, then delete the row.
func (w *Worker) succeed(ctx context.Context, row laravel.JobRow, out outcome) {
	if out.job != nil {
		w.dispatchNextInChain(out.job)
		if out.batchID != "" {
			w.recordBatchSuccess(out.batchID, out.job.UUID)
		}
	}
	w.completer.delete(row)
}

// dispatchNextInChain pushes chained[0] as dispatchNextJobInChain does.
// The payload takes the shape (key set) of the current one, so a 12.x app
// gets 12.x keys. Go cannot know whether the next class implements
// ShouldBeEncrypted; it is encrypted when the current command was.
func (w *Worker) dispatchNextInChain(job *handlers.Job) {
	cmd, err := job.Command()
	if err != nil || cmd == nil {
		return
	}
	next, err := payload.NextInChain(cmd)
	if errors.Is(err, payload.ErrChainEnd) {
		return
	}
	if err != nil {
		w.log.Error().Err(err).Str("uuid", job.UUID).Msg("cannot build the next job of the chain")
		return
	}
	opts := payload.BuildOptions{Shape: shapeOf(job.Payload)}
	if cmd.Encrypted {
		opts.Encrypter = w.cfg.Encrypter
	}
	raw, err := payload.BuildObjectPayload(next.Object, opts)
	if err != nil {
		w.log.Error().Err(err).Str("uuid", job.UUID).Msg("cannot encode the next job of the chain")
		return
	}
	q := next.Queueable()
	item := laravel.PushItem{Payload: raw}
	if q.Queue != nil {
		item.Queue = *q.Queue
	}
	if q.Connection != nil && *q.Connection != w.store.Connection() {
		w.log.Warn().Str("connection", *q.Connection).Msg("next chain link names another queue connection; pushing it to this one")
	}
	w.completer.push(item)
}

// shapeOf picks the payload key set of the Laravel version that wrote p.
func shapeOf(p *payload.Payload) payload.Shape {
	switch {
	case p.Has("deleteWhenMissingModels"):
		return payload.Shape13
	case p.Data.Has("batchId"):
		return payload.Shape1251
	case p.Has("createdAt"):
		return payload.Shape12
	}
	return payload.Shape8
}

// batchID is data.batchId (12.51+) or the command's batchId property.
func (w *Worker) batchID(job *handlers.Job) string {
	if b := job.Payload.Data.BatchID; b != nil && *b != "" {
		return *b
	}
	cmd, err := job.Command()
	if err != nil || cmd == nil {
		return ""
	}
	if b := cmd.Queueable().BatchID; b != nil {
		return *b
	}
	return ""
}

// batchInfo caches what the worker needs to know of a batch's options.
type batchInfo struct {
	callbacks     bool
	allowFailures bool
}

// batchCache remembers the options of batches seen, so each batch is
// parsed once. It is bounded: a worker meets an unbounded number of
// batches over its life, and forgetting one only costs a re-parse.
type batchCache struct {
	mu sync.Mutex
	m  map[string]batchInfo
}

const maxCachedBatches = 1024

func (c *batchCache) get(id string) (batchInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, ok := c.m[id]
	return info, ok
}

func (c *batchCache) put(id string, info batchInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedBatches {
		c.m = make(map[string]batchInfo)
	}
	c.m[id] = info
}

// checkBatch leaves jobs of batches with PHP callbacks to PHP workers
// (Go cannot run then/catch/finally closures), and deletes jobs of a
// cancelled batch without running them, counting them as PHP's
// `if ($this->batch()->cancelled()) return;` does.
func (w *Worker) checkBatch(ctx context.Context, batchID string, job *handlers.Job) (outcome, bool) {
	if w.cfg.Batches == nil {
		return outcome{}, false
	}
	b, err := w.cfg.Batches.FindBatch(ctx, batchID)
	if errors.Is(err, laravel.ErrBatchNotFound) {
		return outcome{}, false
	}
	if err != nil {
		return outcome{verdict: verdictRelease, err: err, reason: "batch_lookup_failed"}, true
	}
	info := w.batchInfo(b)
	if info.callbacks {
		return outcome{verdict: verdictUnreserve, reason: "batch_has_php_callbacks"}, true
	}
	if b.Cancelled() {
		return outcome{verdict: verdictDelete, job: job, batchID: batchID, reason: "batch_cancelled"}, true
	}
	return outcome{}, false
}

func (w *Worker) batchInfo(b laravel.Batch) batchInfo {
	if info, ok := w.batches.get(b.ID); ok {
		return info
	}
	info := parseBatchOptions(b.Options)
	w.batches.put(b.ID, info)
	return info
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

func (w *Worker) recordBatchSuccess(batchID, uuid string) {
	if w.cfg.Batches == nil {
		return
	}
	w.completer.persist("batch-success", func(ctx context.Context) error {
		_, err := w.cfg.Batches.RecordBatchSuccess(ctx, batchID, uuid)
		if errors.Is(err, laravel.ErrBatchNotFound) {
			return nil
		}
		return err
	})
}

func (w *Worker) recordBatchFailure(ctx context.Context, batchID string, p *payload.Payload) {
	if p == nil || w.cfg.Batches == nil {
		return
	}
	b, err := w.cfg.Batches.FindBatch(ctx, batchID)
	if err != nil {
		return
	}
	allow := w.batchInfo(b).allowFailures
	w.completer.persist("batch-failure", func(ctx context.Context) error {
		_, err := w.cfg.Batches.RecordBatchFailure(ctx, batchID, p.UUID, allow)
		if errors.Is(err, laravel.ErrBatchNotFound) {
			return nil
		}
		return err
	})
}
