package redisproto

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// notifyBlock is how long one BLPOP blocks on the server. A wait shorter
// than that ends on the caller's side and leaves the BLPOP running, to be
// taken over by the next wait (NotifyWaiter); longer waits issue another.
const notifyBlock = 10 * time.Second

// NotifyWaiter waits on the queues' :notify lists with BLPOP, as
// RedisQueue::retrieveNextJob does with block_for, on a connection of its
// own so that a wait never holds a connection the pops need. One BLPOP at
// a time: it runs on its own goroutine, and a wait that ends first (its
// deadline, its context) leaves it running; the next wait on the same
// lists takes it over, and a token it takes with no wait to hand it to is
// pushed back to its list, as if it had never been taken.
type NotifyWaiter struct {
	q *Queue

	mu     sync.Mutex
	client redis.UniversalClient // nil until the first wait
	cur    *blpop                // the BLPOP under way, if any
	closed bool
}

// blpop is one BLPOP under way. Its result fields are written, and done
// closed, under the waiter's mutex.
type blpop struct {
	keys    []string
	done    chan struct{}
	key     string // the list a token came from; "" when it timed out
	err     error
	adopted bool // a wait is waiting on it and takes its token
}

// NotifyWaiter is the queue's waiter, made on first use and closed with
// the queue.
func (q *Queue) NotifyWaiter() *NotifyWaiter {
	q.waitOnce.Do(func() { q.waiter = &NotifyWaiter{q: q} })
	return q.waiter
}

// Wait blocks until a token comes to one of the queues' notify lists, the
// time until passes, or ctx ends. It returns the queue whose token it
// took, and whether one came: the caller pops that queue next, and the
// token is then settled as Laravel settles it (the pop takes one more if
// it finds a job; see Queue.Handback). ErrCrossSlot when the lists are
// on different cluster slots.
func (w *NotifyWaiter) Wait(ctx context.Context, queues []string, until time.Time) (string, bool, error) {
	keys := make([]string, len(queues))
	byKey := make(map[string]string, len(queues))
	for i, queue := range queues {
		keys[i] = w.q.keys(queue).Notify
		byKey[keys[i]] = queue
	}
	if w.q.cfg.Redis.Cluster && !oneHashTag(keys) {
		return "", false, ErrCrossSlot
	}
	for {
		b, err := w.start(keys)
		if err != nil {
			return "", false, err
		}
		key, finished, err := w.await(ctx, b, until)
		if err != nil || key != "" {
			return byKey[key], key != "", err
		}
		if !finished || !time.Now().Before(until) || ctx.Err() != nil {
			return "", false, nil
		}
		// The BLPOP timed out before the wait's end: issue another.
	}
}

// start takes over the BLPOP under way on keys, or issues one. A BLPOP on
// other keys (the queues changed) is cut by closing its connection.
func (w *NotifyWaiter) start(keys []string) (*blpop, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, errors.New("redisqueue: the notify waiter is closed")
	}
	if w.cur != nil && !slices.Equal(w.cur.keys, keys) {
		w.dropClientLocked()
	}
	if w.cur != nil {
		w.cur.adopted = true
		return w.cur, nil
	}
	if w.client == nil {
		c, err := w.q.sideClient()
		if err != nil {
			return nil, err
		}
		w.client = c
	}
	b := &blpop{keys: keys, done: make(chan struct{}), adopted: true}
	w.cur = b
	go w.run(w.client, b)
	return b, nil
}

// run is the BLPOP's goroutine.
func (w *NotifyWaiter) run(client redis.UniversalClient, b *blpop) {
	res, err := client.BLPop(context.Background(), notifyBlock, b.keys...).Result()
	w.mu.Lock()
	if w.cur == b {
		w.cur = nil
	}
	switch {
	case err == nil && len(res) == 2:
		b.key = res[0]
	case err != nil && !isNil(err):
		b.err = w.q.wrap(err)
	}
	handBack := b.key != "" && !b.adopted
	close(b.done)
	w.mu.Unlock()
	if handBack {
		// Nobody waits for this token: give it back, so the list holds
		// what it would without this BLPOP, unless the job it was for is
		// gone already (this worker's own next pop may have taken it,
		// finding no token to take). Through the pops' pool, never the
		// waiter's one connection: the next wait's BLPOP may hold that
		// already, and would block on the very list this token is for.
		// A closed queue fails here, and the token is lost as with a PHP
		// worker killed in BLPOP.
		ready := strings.TrimSuffix(b.key, ":notify")
		_ = handBackScript.Run(context.Background(), w.q.rdb, []string{ready, b.key}).Err()
	}
}

// handBackScript pushes a token back to a notify list while its queue's
// list holds a job. KEYS: 1 ready list, 2 notify list.
var handBackScript = redis.NewScript(`
if redis.call('llen', KEYS[1]) > 0 then
    redis.call('rpush', KEYS[2], 1)
    return 1
end
return 0
`)

// await waits for b, until, or ctx. finished: b ended (a timeout when key
// is "").
func (w *NotifyWaiter) await(ctx context.Context, b *blpop, until time.Time) (key string, finished bool, err error) {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-b.done:
	case <-t.C:
	case <-ctx.Done():
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-b.done:
		return b.key, true, b.err
	default:
		b.adopted = false // run hands its token back
		return "", false, nil
	}
}

// Close cuts the BLPOP under way and closes the waiter's connection.
func (w *NotifyWaiter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.dropClientLocked()
	return nil
}

// dropClientLocked closes the connection, which ends its BLPOP.
func (w *NotifyWaiter) dropClientLocked() {
	if w.client != nil {
		_ = w.client.Close()
		w.client = nil
	}
	if w.cur != nil {
		w.cur.adopted = false // a shared client's BLPOP runs on: hand back
		w.cur = nil
	}
}

// Handback pushes a token a wait took back to queue's notify list: the
// pop that followed left the list's jobs in place (another class), so a
// worker that runs them (PHP's, blocked on the list) wakes for them.
func (q *Queue) Handback(ctx context.Context, queue string) error {
	return q.wrap(q.rdb.RPush(ctx, q.keys(queue).Notify, 1).Err())
}

// NextDue is when the earliest job of queues' delayed sets becomes due,
// or their earliest reservation expires (not with retry_after null): a
// pop then migrates it, so a wait must end by then. ok is false when
// none is scheduled.
func (q *Queue) NextDue(ctx context.Context, queues []string) (time.Time, bool, error) {
	pipe := q.rdb.Pipeline()
	var cmds []*redis.ZSliceCmd
	for _, queue := range queues {
		k := q.keys(queue)
		cmds = append(cmds, pipe.ZRangeWithScores(ctx, k.Delayed, 0, 0))
		if !q.cfg.NeverExpire {
			cmds = append(cmds, pipe.ZRangeWithScores(ctx, k.Reserved, 0, 0))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !isNil(err) {
		return time.Time{}, false, q.wrap(err)
	}
	earliest, found := math.Inf(1), false
	for _, c := range cmds {
		if z := c.Val(); len(z) > 0 && z[0].Score < earliest {
			earliest, found = z[0].Score, true
		}
	}
	if !found {
		return time.Time{}, false, nil
	}
	// Scores are Unix seconds; the migration moves a member once now (in
	// whole seconds) reaches its score.
	return time.Unix(int64(math.Ceil(earliest)), 0), true, nil
}

// sideClient is a client of its own for the blocking waits: one
// connection (per cluster node), so a BLPOP never takes one of the pops'.
func (q *Queue) sideClient() (redis.UniversalClient, error) {
	if len(q.cfg.Redis.Addrs) == 0 && q.cfg.Redis.Sentinel == nil {
		// A queue over a client set up elsewhere, with no address to dial:
		// share its pool (one connection of it while waiting).
		return nopCloser{q.rdb}, nil
	}
	return newClientPool(q.cfg.Redis, 1)
}

// nopCloser shares a client without closing it.
type nopCloser struct{ redis.UniversalClient }

func (nopCloser) Close() error { return nil }

// oneHashTag: every key has the same hash tag, so all are in one slot.
func oneHashTag(keys []string) bool {
	tag := func(k string) string {
		open := strings.IndexByte(k, '{')
		if open < 0 {
			return "\x00" + k
		}
		end := strings.IndexByte(k[open+1:], '}')
		if end <= 0 {
			return "\x00" + k
		}
		return k[open+1 : open+1+end]
	}
	first := tag(keys[0])
	for _, k := range keys[1:] {
		if tag(k) != first {
			return false
		}
	}
	return true
}
