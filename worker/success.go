package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/payload"
	"github.com/laraworker/laraworker/phpserialize"
)

// succeed is CallQueuedHandler's success path: push the next link of a
// chain, record the batch success, delete the row. A job with neither
// joins the grouped delete; one with a followup is finished in one write
// (all three or none), so a link is never pushed and a batch never
// counted for a job whose reservation was lost, nor twice.
func (w *Worker) succeed(row jobqueue.JobRow, p *payload.Payload, out outcome) {
	var f jobqueue.Followup
	if out.job != nil {
		f.Next = w.nextInChain(out.job)
	}
	if out.batchID != "" && w.cfg.Batches != nil && p != nil {
		f.Batch = &jobqueue.BatchEntry{ID: out.batchID, JobUUID: p.UUID}
	}
	if f.Next == nil && f.Batch == nil {
		w.completer.delete(row)
		return
	}
	w.completer.finish(row, f)
}

// nextInChain builds chained[0] as dispatchNextJobInChain does; nil at
// the end of the chain. The payload takes the shape (key set) of the
// current one, so a 12.x app gets 12.x keys. Go cannot know whether the
// next class implements ShouldBeEncrypted; it is encrypted when the
// current command was.
func (w *Worker) nextInChain(job *handlers.Job) *jobqueue.PushItem {
	cmd, err := job.Command()
	if err != nil || cmd == nil {
		return nil
	}
	next, err := payload.NextInChain(cmd)
	if errors.Is(err, payload.ErrChainEnd) {
		return nil
	}
	if err != nil {
		w.log.Error().Err(err).Str("uuid", job.UUID).Msg("cannot build the next job of the chain")
		return nil
	}
	opts := payload.BuildOptions{Shape: shapeOf(job.Payload)}
	if cmd.Encrypted {
		opts.Encrypter = w.cfg.Encrypter
	}
	raw, err := payload.BuildObjectPayload(next.Object, opts)
	if err != nil {
		w.log.Error().Err(err).Str("uuid", job.UUID).Msg("cannot encode the next job of the chain")
		return nil
	}
	q := next.Queueable()
	item := &jobqueue.PushItem{Payload: raw}
	if q.Queue != nil {
		item.Queue = *q.Queue
	}
	if q.Connection != nil && *q.Connection != w.store.Connection() {
		w.log.Warn().Str("connection", *q.Connection).Msg("next chain link names another queue connection; pushing it to this one")
	}
	return item
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
	if errors.Is(err, jobqueue.ErrBatchNotFound) {
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

func (w *Worker) batchInfo(b jobqueue.Batch) batchInfo {
	if info, ok := w.batches.get(b.ID); ok {
		return info
	}
	info := parseBatchOptions(b.Options)
	w.batches.put(b.ID, info)
	return info
}

// batchFailure is what a failed job records in its batch, computed when
// the failure is written (and again if that write is retried): the batch
// options may have to be read first, and a read that fails must not lose
// the failure (Laravel's batch would then never finish). Nil when the job
// is in no batch, or the worker has no batch repository.
func (w *Worker) batchFailure(batchID string, p *payload.Payload) func(ctx context.Context) (*jobqueue.BatchEntry, error) {
	if batchID == "" || p == nil || w.cfg.Batches == nil {
		return nil
	}
	return func(ctx context.Context) (*jobqueue.BatchEntry, error) {
		info, ok := w.batches.get(batchID)
		if !ok {
			b, err := w.cfg.Batches.FindBatch(ctx, batchID)
			if errors.Is(err, jobqueue.ErrBatchNotFound) {
				return nil, nil // gone: nothing to count, as Laravel's null batch()
			}
			if err != nil {
				return nil, fmt.Errorf("reading batch %s: %w", batchID, err)
			}
			info = w.batchInfo(b)
		}
		return &jobqueue.BatchEntry{ID: batchID, JobUUID: p.UUID, AllowFailures: info.allowFailures}, nil
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
