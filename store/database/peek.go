package database

import (
	"context"
	"sync"
)

// An idle worker claims about once a second and finds nothing. Where the
// claim is a transaction (MySQL/MariaDB: the locking select, then the
// rollback when it found nothing; four round trips on a pool that does
// not pack them), each of those empty claims costs the worker its round
// trips, and every round trip wakes the worker (docs/PERFORMANCE.md,
// "Pick-up latency": the one saved here took about a fifth off an idle
// worker's CPU without its heartbeat, on a 2-core machine). So after a
// claim on a queue came back empty, the next one first runs the same
// select without its lock, outside any transaction, and stops there when
// it finds no row: one round trip, and no lock taken or gap held. When it
// finds one, the claim runs as always, so what is claimed, in what order,
// and what another worker holds are exactly as without the look; the
// look only decides whether the transaction starts. A look that fails
// lets the claim run and report the error.

// idleQueues are the queues whose last claim found nothing.
type idleQueues struct {
	mu    sync.Mutex
	empty map[string]bool
}

// wasEmpty reports whether the last claim on the queue found nothing.
func (s *idleQueues) wasEmpty(queue string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.empty[queue]
}

// record keeps whether a claim on the queue found nothing.
func (s *idleQueues) record(queue string, empty bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if empty == s.empty[queue] {
		return
	}
	if s.empty == nil {
		s.empty = map[string]bool{}
	}
	if empty {
		s.empty[queue] = true
	} else {
		delete(s.empty, queue)
	}
}

// nothingClaimable runs the claim's select without its lock (query and
// args as the claim would run them, limited to one row) and reports
// whether it found no row. Any error is false: the claim then runs.
func (q *Queue) nothingClaimable(ctx context.Context, query string, args []any) bool {
	rows, err := q.db.QueryContext(ctx, query, args...)
	if err != nil {
		return false
	}
	defer rows.Close()
	found := rows.Next()
	if q.testHookPeek != nil {
		q.testHookPeek(found)
	}
	return !found && rows.Err() == nil
}
