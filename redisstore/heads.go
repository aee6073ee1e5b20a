package redisstore

import (
	"sort"
	"sync"

	"github.com/laraworker/laraworker/redisqueue"
	"github.com/prometheus/client_golang/prometheus"
)

// heads keeps track of the jobs claims left at the head of a queue: each
// is counted once (while it stays at the head, every claim meets it
// again), and a class Go has no handler for is logged once per queue.
type heads struct {
	mu sync.Mutex
	// current names the job each queue's pop stopped at last.
	current map[string]string
	left    map[leftKey]int64
	logged  map[string]bool
}

type leftKey struct{ queue, reason string }

// Reasons a claim leaves a job at the head.
const (
	// ReasonClass: Go has no handler for its class.
	ReasonClass = "class"
	// ReasonGivenBack: Go gave the job back (to PHP) and leaves it there.
	ReasonGivenBack = "given_back"
	// ReasonCopy: the job is a byte-for-byte copy of one reserved now (a
	// payload pushed twice); it waits until that reservation is gone.
	ReasonCopy = "copy"
)

// maxLogged bounds the (queue, class) pairs logged: the classes come from
// payloads, which whoever writes the queue controls.
const maxLogged = 1000

// note records what a pop on queue stopped at (head nil: nothing, or the
// end of the list).
func (h *heads) note(s *Store, queue string, head *redisqueue.Head) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.current == nil {
		h.current, h.left, h.logged = map[string]string{}, map[leftKey]int64{}, map[string]bool{}
	}
	if head == nil {
		delete(h.current, queue)
		return
	}
	id := head.DisplayName + "\x00" + head.UUID
	if h.current[queue] == id {
		return // the same job, still there
	}
	h.current[queue] = id
	reason := ReasonClass
	switch {
	case head.ByID:
		reason = ReasonGivenBack
	case head.Copy:
		reason = ReasonCopy
	}
	h.left[leftKey{queue, reason}]++
	if reason == ReasonCopy && len(h.logged) < maxLogged {
		h.logged[queue+"\x00copy\x00"+head.UUID] = true
		s.log.Warn().Str("queue", queue).Str("class", head.DisplayName).Str("uuid", head.UUID).
			Msg("a job byte-for-byte identical to one reserved now (the same payload pushed twice) heads this Redis queue: it is left in place until that one is settled, as both would share one reservation; counted in laraworker_redis_jobs_left_total")
		return
	}
	if reason != ReasonClass || h.logged[queue+"\x00"+head.DisplayName] || len(h.logged) >= maxLogged {
		return
	}
	h.logged[queue+"\x00"+head.DisplayName] = true
	s.log.Warn().Str("queue", queue).Str("class", head.DisplayName).Str("uuid", head.UUID).
		Msg("a job Go has no handler for (or does not claim now) heads this Redis queue: it is left in place, untouched, for PHP workers, and Go claims nothing more from this queue until one has taken it (a pop cannot skip a job; give Go's classes queues of their own). Logged once per class and queue; counted in laraworker_redis_jobs_left_total")
}

// LeftJobs is how many jobs claims left at the head of a queue, counted
// once each.
type LeftJobs struct {
	Queue  string
	Reason string // ReasonClass, ReasonGivenBack or ReasonCopy
	Jobs   int64
}

// Left reports the jobs left at queue heads so far, by queue and reason.
func (s *Store) Left() []LeftJobs {
	s.heads.mu.Lock()
	defer s.heads.mu.Unlock()
	out := make([]LeftJobs, 0, len(s.heads.left))
	for k, n := range s.heads.left {
		out = append(out, LeftJobs{Queue: k.queue, Reason: k.reason, Jobs: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Queue != out[j].Queue {
			return out[i].Queue < out[j].Queue
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

var leftDesc = prometheus.NewDesc("laraworker_redis_jobs_left_total",
	"Jobs a claim found at the head of a Redis queue and left in place, untouched, counted once each: reason class (Go has no handler for it), given_back (Go gave it back to PHP) or copy (a byte-for-byte copy of a job reserved now waits for it).",
	[]string{"queue", "reason"}, nil)

// Describe is prometheus.Collector's: register the store to export
// laraworker_redis_jobs_left_total.
func (s *Store) Describe(ch chan<- *prometheus.Desc) { ch <- leftDesc }

// Collect is prometheus.Collector's.
func (s *Store) Collect(ch chan<- prometheus.Metric) {
	for _, l := range s.Left() {
		ch <- prometheus.MustNewConstMetric(leftDesc, prometheus.CounterValue, float64(l.Jobs), l.Queue, l.Reason)
	}
}
