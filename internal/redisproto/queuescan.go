package redisproto

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// QueueScan finds the queues of a connection a slice at a time: no key
// lists them, and a SCAN of the whole keyspace (Queues) costs what the
// keyspace holds, which the app's cache or sessions can make large. Each
// ScanQueues call asks every node for one SCAN step, so its cost is
// bounded whatever the keyspace holds. The zero value starts a pass.
type QueueScan struct {
	mu sync.Mutex
	// cursors are each node's SCAN cursor ("" for a single server);
	// done marks the nodes whose pass ended.
	cursors map[string]uint64
	done    map[string]bool
}

// ScanQueues takes one SCAN step of count keys on every node and returns
// the queue names found in it (as in Queues) and whether that ended a
// full pass over every node (the next call starts another).
func (q *Queue) ScanQueues(ctx context.Context, s *QueueScan, count int64) (names []string, passDone bool, err error) {
	base := q.cfg.Redis.Prefix + "queues:"
	pattern := globEscape(base) + "*"
	s.mu.Lock()
	if s.cursors == nil {
		s.cursors, s.done = map[string]uint64{}, map[string]bool{}
	}
	s.mu.Unlock()
	seen := map[string]bool{}
	step := func(ctx context.Context, node string, c redis.Cmdable) error {
		s.mu.Lock()
		cursor, finished := s.cursors[node], s.done[node]
		s.mu.Unlock()
		if finished {
			return nil
		}
		keys, next, err := c.Scan(ctx, cursor, pattern, count).Result()
		if err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.cursors[node] = next
		s.done[node] = next == 0
		for _, k := range keys {
			seen[queueOfKey(strings.TrimPrefix(k, base))] = true
		}
		return nil
	}
	nodes := 1
	if cc, ok := q.rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		nodes = 0
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			mu.Lock()
			nodes++
			mu.Unlock()
			return step(ctx, c.Options().Addr, c)
		})
	} else {
		err = step(ctx, "", q.rdb)
	}
	if err != nil {
		return nil, false, q.wrap(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	finished := 0
	for _, d := range s.done {
		if d {
			finished++
		}
	}
	if finished >= nodes {
		passDone = true
		clear(s.cursors)
		clear(s.done)
	}
	for n := range seen {
		names = append(names, n)
	}
	return names, passDone, nil
}

// queueOfKey is the queue a key names, the key without its prefix and
// "queues:": the name, less a :delayed, :reserved or :notify suffix.
func queueOfKey(key string) string {
	for _, suffix := range []string{":delayed", ":reserved", ":notify"} {
		if name, ok := strings.CutSuffix(key, suffix); ok {
			return name
		}
	}
	return key
}
