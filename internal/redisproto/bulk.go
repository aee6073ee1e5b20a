package redisproto

import (
	"context"
	"fmt"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/redis/go-redis/v9"
)

// PushMany pushes jobs as RedisQueue::bulk does: each is a push (or, with
// a Delay, a later) of its payload, which must carry "attempts" (see
// PreparePayload). On one server they go in MULTI transactions of up to
// bulkChunk jobs, as Laravel's bulk wraps its pushes in one; on a cluster,
// whose queues may live in different slots, one by one. On an error, the
// transactions before it are written.
func (q *Queue) PushMany(ctx context.Context, items []jobqueue.PushItem) error {
	for _, it := range items {
		if err := q.cfg.CheckQueue(q.cfg.queueName(it.Queue)); err != nil {
			return err
		}
		if err := checkPayload(it.Payload); err != nil {
			return err
		}
	}
	if q.cfg.Redis.Cluster {
		for _, it := range items {
			var err error
			if it.Delay > 0 {
				_, err = q.Later(ctx, it.Queue, it.Payload, it.Delay)
			} else {
				_, err = q.Push(ctx, it.Queue, it.Payload)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	for _, s := range []*redis.Script{pushScript, laterScript} {
		if err := s.Load(ctx, q.rdb).Err(); err != nil {
			return q.wrap(err)
		}
	}
	for start := 0; start < len(items); start += bulkChunk {
		chunk := items[start:min(start+bulkChunk, len(items))]
		now := q.now().Unix()
		_, err := q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, it := range chunk {
				k := q.cfg.Keys(it.Queue)
				if it.Delay > 0 {
					laterScript.EvalSha(ctx, p, []string{k.Delayed}, now+seconds(it.Delay), it.Payload)
				} else {
					pushScript.EvalSha(ctx, p, []string{k.Ready, k.Notify}, it.Payload)
				}
			}
			return nil
		})
		if err != nil && !isNil(err) {
			return q.wrap(fmt.Errorf("pushing jobs %d to %d of %d: %w", start+1, start+len(chunk), len(items), err))
		}
	}
	return nil
}

// bulkChunk bounds one MULTI of PushMany.
const bulkChunk = 500

// withdrawScript takes a pushed job back while it still waits: the first
// copy of the payload in the list (with one notify token), else the
// payload in the delayed set. Reply: 1 taken back, 0 not waiting any more.
//
// KEYS: 1 ready list, 2 delayed set, 3 notify list. ARGV: 1 payload.
var withdrawScript = redis.NewScript(`
if redis.call('lrem', KEYS[1], 1, ARGV[1]) == 1 then
  redis.call('lpop', KEYS[3])
  return 1
end
return redis.call('zrem', KEYS[2], ARGV[1])
`)

// Withdraw takes back a job this process pushed (the exact payload bytes
// on queue) if no pop has taken it yet, and reports whether it did: the
// undo of a push that turned out not to be this worker's to make. It
// reads the list, so it costs what the list's length costs.
func (q *Queue) Withdraw(ctx context.Context, queue string, payload []byte) (bool, error) {
	k := q.keys(queue)
	if k.err != nil {
		return false, k.err
	}
	n, err := withdrawScript.Run(ctx, q.rdb, []string{k.Ready, k.Delayed, k.Notify}, payload).Int64()
	if err != nil {
		return false, q.wrap(err)
	}
	return n == 1, nil
}
