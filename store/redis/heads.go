package redis

import (
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/prometheus/client_golang/prometheus"
)

// heads keeps track of the jobs claims leave in place, at the head of a
// queue or behind it within the lookahead: what the last claim on each
// queue left (LeftNow, the gauge), each job counted once however many
// claims meet it (Left, the counter), and one log line per class and
// queue (and per copy, and per queue whose lookahead met its bound).
type heads struct {
	mu sync.Mutex
	// views are what the last claim on each queue left in place; viewed
	// is len(views), which the claims and waits read without the lock:
	// while no queue has a job left in place (the usual case) they skip
	// wantReport, note and has.
	views  map[string]view
	viewed atomic.Int32
	// seen are the jobs counted, by identity, with when a claim last met
	// them; left the counts by queue and reason.
	seen   map[string]time.Time
	left   map[leftKey]int64
	logged map[string]bool
}

type leftKey struct{ queue, reason string }

// view is what the claims on a queue left in place: the job at the head
// (the last claim's) and the jobs behind it the lookahead passed (the
// last claim that reported them, at most reportEvery ago), and whether
// that lookahead stopped at its bound.
type view struct {
	head     redisproto.Head
	looked   []redisproto.Head
	cut      bool
	reported time.Time
}

// all are the jobs of the view, the head first.
func (v view) all() []redisproto.Head { return append([]redisproto.Head{v.head}, v.looked...) }

// jobs counts the view's jobs by class and reason.
func (v view) jobs() map[classKey]int64 {
	out := map[classKey]int64{}
	for _, j := range v.all() {
		out[classKey{j.DisplayName, reasonOf(j)}]++
	}
	return out
}

// reportEvery is how often a claim asks the pop for each job its
// lookahead passed (redisproto.PopOptions.ReportLooked, which costs Redis
// more per job): the report needs no more.
const reportEvery = time.Second

type classKey struct{ class, reason string }

// Reasons a claim leaves a job in place.
const (
	// ReasonClass: Go has no handler for its class (or it has no
	// displayName, or, behind the head, its bytes do not tell one).
	ReasonClass = jobqueue.LeftClass
	// ReasonGivenBack: Go gave the job back (to PHP) and leaves it there.
	ReasonGivenBack = jobqueue.LeftGivenBack
	// ReasonCopy: the job is a byte-for-byte copy of one reserved now (a
	// payload pushed twice); it waits until that reservation is gone.
	ReasonCopy = jobqueue.LeftCopy
)

// Bounds on what heads remembers: the classes and uuids come from
// payloads, which whoever writes the queue controls.
const (
	maxLogged = 1000
	maxSeen   = 20000
	// seenFor is how long a job no claim meets is remembered as counted.
	seenFor = 10 * time.Minute
)

// wantReport tells whether the next pop on queue should report each job
// its lookahead passes: when the queue has no view yet, or its last
// report is reportEvery old.
func (h *heads) wantReport(queue string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.views[queue]
	return !ok || time.Since(v.reported) >= reportEvery
}

// note records what a pop on queue left in place; reported says whether
// the pop reported each job its lookahead passed.
func (h *heads) note(s *Store, queue string, res redisproto.PopResult, reported bool) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.views == nil {
		h.views, h.seen, h.left, h.logged = map[string]view{}, map[string]time.Time{}, map[leftKey]int64{}, map[string]bool{}
	}
	if res.Head == nil {
		delete(h.views, queue)
		h.viewed.Store(int32(len(h.views)))
		return
	}
	v := h.views[queue]
	v.head = *res.Head
	if reported {
		v.looked, v.cut, v.reported = res.Looked, res.LookaheadCut, now
	}
	h.views[queue] = v
	h.viewed.Store(int32(len(h.views)))
	twins := map[string]int{}
	for _, j := range v.all() {
		reason := reasonOf(j)
		// Jobs with no uuid, and copies, are told apart by how many of
		// the same identity the claim met before them.
		id := queue + "\x00" + reason + "\x00" + j.DisplayName + "\x00" + j.UUID
		twins[id]++
		id += "\x00" + strconv.Itoa(twins[id])
		if _, ok := h.seen[id]; !ok {
			h.left[leftKey{queue, reason}]++
		}
		h.remember(id, now)
	}
	h.logFirst(s, queue, v)
}

// has reports whether the last claim on queue left a job in place.
func (h *heads) has(queue string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.views[queue]
	return ok
}

// reasonOf is why a pop left j in place.
func reasonOf(j redisproto.Head) string {
	switch {
	case j.ByID:
		return ReasonGivenBack
	case j.Copy:
		return ReasonCopy
	}
	return ReasonClass
}

// remember marks a job counted; past maxSeen it forgets the jobs no
// claim met for seenFor, and if that is not enough, all but this one
// (they may then be counted a second time, never lost from the count).
func (h *heads) remember(id string, now time.Time) {
	if _, ok := h.seen[id]; !ok && len(h.seen) >= maxSeen {
		for k, at := range h.seen {
			if now.Sub(at) > seenFor {
				delete(h.seen, k)
			}
		}
		if len(h.seen) >= maxSeen {
			clear(h.seen)
		}
	}
	h.seen[id] = now
}

// logFirst logs, once each, a class Go has no handler for on queue, a
// copy waiting, and a lookahead that met its bound.
func (h *heads) logFirst(s *Store, queue string, v view) {
	jobs := v.jobs()
	for _, j := range v.all() {
		if len(h.logged) >= maxLogged {
			return
		}
		switch reasonOf(j) {
		case ReasonCopy:
			if key := queue + "\x00copy\x00" + j.UUID; !h.logged[key] {
				h.logged[key] = true
				s.log.Warn().Str("queue", queue).Str("class", j.DisplayName).Str("uuid", j.UUID).
					Msg("a job byte-for-byte identical to one reserved now (the same payload pushed twice) is on this Redis queue: it is left in place until that one is settled, as both would share one reservation; counted in laraworker_redis_jobs_left_total")
			}
		case ReasonClass:
			if key := queue + "\x00" + j.DisplayName; !h.logged[key] {
				h.logged[key] = true
				s.log.Warn().Str("queue", queue).Str("class", className(j.DisplayName)).Str("uuid", j.UUID).
					Int64("jobs", jobs[classKey{j.DisplayName, ReasonClass}]).
					Msg("jobs of a class Go has no handler for (or does not claim now) are on this Redis queue (jobs: how many the last claim met): Go leaves them in place, untouched and in order, for PHP workers, and takes its own jobs from behind them. Fix: have a PHP worker serve this queue (php artisan queue:work <connection> --queue=<queue>), or route the class to Go (--route or a registration), or dispatch it to a queue of its own. Logged once per class and queue; laraworker_redis_jobs_left{queue,class} counts them now")
			}
		}
	}
	if key := queue + "\x00cut"; v.cut && !h.logged[key] {
		h.logged[key] = true
		s.log.Warn().Str("queue", queue).Int("lookahead_jobs", redisproto.DefaultLookahead).Int("lookahead_bytes", redisproto.DefaultLookaheadBytes).
			Msg("a claim looked as far past the head of this Redis queue as it may (lookahead_jobs jobs or lookahead_bytes bytes of jobs Go has no handler for) and found none of Go's: Go's jobs further down wait until PHP workers take the jobs ahead of them. Logged once per queue")
	}
}

// className is how a log names a class: "" is a job with no displayName
// (or one its bytes do not tell).
func className(name string) string { return jobqueue.LeftJobs{Class: name}.ClassName() }

// LeftJobs is how many jobs claims left in place on a queue, counted
// once each.
type LeftJobs struct {
	Queue  string
	Reason string // ReasonClass, ReasonGivenBack or ReasonCopy
	Jobs   int64
}

// Left reports the jobs left in place so far, by queue and reason, each
// counted once however many claims met it.
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

// LeftNow is jobqueue.LeftReporter's: what the last claim on each queue
// left in place for other workers, by class and reason, in queue and
// class order.
func (s *Store) LeftNow() []jobqueue.LeftJobs {
	s.heads.mu.Lock()
	defer s.heads.mu.Unlock()
	var out []jobqueue.LeftJobs
	for queue, v := range s.heads.views {
		for k, n := range v.jobs() {
			out = append(out, jobqueue.LeftJobs{Queue: queue, Class: k.class, Reason: k.reason, Jobs: n, More: v.cut})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Queue != b.Queue {
			return a.Queue < b.Queue
		}
		if a.Class != b.Class {
			return a.Class < b.Class
		}
		return a.Reason < b.Reason
	})
	return out
}

var (
	leftDesc = prometheus.NewDesc("laraworker_redis_jobs_left_total",
		"Jobs claims found on a Redis queue (at its head, or behind it within the lookahead) and left in place, untouched, counted once each: reason class (Go has no handler for it), given_back (Go gave it back to PHP) or copy (a byte-for-byte copy of a job reserved now waits for it).",
		[]string{"queue", "reason"}, nil)
	leftNowDesc = prometheus.NewDesc("laraworker_redis_jobs_left",
		"Jobs the last claim on a Redis queue left in place for other workers (PHP's), by class (\"\": no displayName Go can read; "+maxGaugeClassesText+" classes at most, then \"(other)\") and reason, as laraworker_redis_jobs_left_total.",
		[]string{"queue", "class", "reason"}, nil)
)

// maxGaugeClasses bounds the class labels of laraworker_redis_jobs_left.
const (
	maxGaugeClasses     = 100
	maxGaugeClassesText = "100"
)

// Describe is prometheus.Collector's: register the store to export
// laraworker_redis_jobs_left_total and laraworker_redis_jobs_left.
func (s *Store) Describe(ch chan<- *prometheus.Desc) {
	ch <- leftDesc
	ch <- leftNowDesc
}

// Collect is prometheus.Collector's.
func (s *Store) Collect(ch chan<- prometheus.Metric) {
	for _, l := range s.Left() {
		ch <- prometheus.MustNewConstMetric(leftDesc, prometheus.CounterValue, float64(l.Jobs), l.Queue, l.Reason)
	}
	sums := map[[3]string]int64{}
	classes := map[string]bool{}
	for _, l := range s.LeftNow() {
		class := l.Class
		if !classes[class] && len(classes) >= maxGaugeClasses {
			class = "(other)"
		}
		classes[class] = true
		sums[[3]string{l.Queue, class, l.Reason}] += l.Jobs
	}
	for k, n := range sums {
		ch <- prometheus.MustNewConstMetric(leftNowDesc, prometheus.GaugeValue, float64(n), k[0], k[1], k[2])
	}
}
