package worker

import (
	"sync"
	"sync/atomic"
	"time"
)

// skipSet remembers jobs this worker gave back to PHP, so its claims
// exclude them instead of reserving them again in a loop. Entries expire
// after skipFor (the row is usually gone by then; if not, it is claimed
// and given back once more) and at most maxSkipped are kept, so the set
// stays small whatever the worker's uptime.
type skipSet struct {
	mu      sync.Mutex
	entries []skipped
	// size is len(entries), read without the lock by claims, which skip
	// list when it is 0 (a worker that gave nothing back).
	size atomic.Int32
}

type skipped struct {
	id    int64
	since time.Time
}

const (
	maxSkipped = 1000
	skipFor    = 5 * time.Minute
)

func (s *skipSet) add(id int64, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, skipped{id, now})
	if len(s.entries) > maxSkipped {
		s.entries = append(s.entries[:0], s.entries[len(s.entries)-maxSkipped:]...)
	}
	s.size.Store(int32(len(s.entries)))
}

// list returns the ids still excluded at now, dropping expired ones.
func (s *skipSet) list(now time.Time) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := s.entries[:0]
	for _, e := range s.entries {
		if now.Sub(e.since) < skipFor {
			keep = append(keep, e)
		}
	}
	s.entries = keep
	s.size.Store(int32(len(keep)))
	if len(keep) == 0 {
		return nil
	}
	ids := make([]int64, len(keep))
	for i, e := range keep {
		ids[i] = e.id
	}
	return ids
}
