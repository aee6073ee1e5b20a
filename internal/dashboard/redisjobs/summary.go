package redisjobs

import (
	"maps"
	"slices"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
)

// Summarize writes what the last refresh read: exact counts per queue
// (a due delayed job counts as ready and an expired reservation as
// expired: the next pop moves both to the list), the delayed schedule,
// the soonest due jobs, the reserved ones, and the classes among the
// first jobs of each queue.
func (s *Source) Summarize(sum *snapshot.Summary, now time.Time) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sum.Driver, sum.Sampled = "redis", s.opt.Head
	sum.JobsCaughtUp, sum.JobsPass, sum.Tags = s.caughtUp, s.pass, s.tags
	buckets := snapshot.DelayBuckets(now)
	schedule := make([]int64, len(buckets))
	classes := map[[2]string]*snapshot.ClassCounts{}
	for _, name := range slices.Sorted(maps.Keys(s.queues)) {
		v := s.queues[name]
		qc := s.counts(name, v, now)
		sum.JobsRows += int(v.counts.Ready + v.counts.Delayed + v.counts.Reserved)
		if qc != (snapshot.QueueCounts{Queue: name}) {
			sum.Queues = append(sum.Queues, qc)
		}
		addSchedule(schedule, v)
		s.addClasses(classes, name, v, now)
		sum.ReservedTotal += int(v.counts.Reserved)
		for _, e := range v.reserved {
			sum.Reserved = append(sum.Reserved, s.reservedJob(name, e, now))
		}
		for _, e := range v.delayed {
			if e.score > now.Unix() {
				sum.NextDue = snapshot.AppendDue(sum.NextDue, snapshot.DueJob{JobID: e.id, Queue: name, Class: e.class, AvailableAt: time.Unix(e.score, 0)})
			}
		}
	}
	for i, b := range buckets {
		sum.Schedule = append(sum.Schedule, snapshot.Bucket{Label: b.Label, Count: schedule[i]})
	}
	for _, c := range classes {
		sum.Classes = append(sum.Classes, *c)
	}
	snapshot.SortClasses(sum.Classes)
	slices.SortFunc(sum.Reserved, func(a, b snapshot.ReservedJob) int { return a.ReservedAt.Compare(b.ReservedAt) })
	if len(sum.Reserved) > snapshot.MaxReservedShown {
		sum.Reserved = sum.Reserved[:snapshot.MaxReservedShown]
	}
}

// counts are a queue's counts by state, as a pop would find them.
func (s *Source) counts(name string, v *queueView, now time.Time) snapshot.QueueCounts {
	c := v.counts
	qc := snapshot.QueueCounts{Queue: name, Ready: c.Ready + c.DelayedDue, Delayed: c.Delayed - c.DelayedDue,
		Reserved: c.Reserved, OldestReady: s.oldestReady(v, now)}
	if s.expires {
		qc.Reserved, qc.Expired = c.Reserved-c.ReservedExpired, c.ReservedExpired
	}
	return qc
}

// oldestReady is how long the longest-waiting ready job has waited: a
// due delayed job since its score; the list's head since its createdAt
// (plus its delay), else since the refreshes first saw it (a lower
// bound); 0 when nothing is ready.
func (s *Source) oldestReady(v *queueView, now time.Time) time.Duration {
	var wait time.Duration
	if v.counts.DelayedDue > 0 && len(v.delayed) > 0 {
		wait = now.Sub(time.Unix(v.delayed[0].score, 0))
	}
	if v.counts.Ready > 0 && len(v.ready) > 0 {
		head := v.ready[0]
		since := v.seen[head.uuid]
		if head.created > 0 {
			since = time.Unix(head.created+head.delay, 0)
		}
		if !since.IsZero() {
			wait = max(wait, now.Sub(since))
		}
	}
	return max(wait, 0)
}

// addSchedule counts the queue's delayed jobs (not due) into the buckets
// of snapshot.DelayBuckets: the peek counted those due by each bucket's
// end but the last, which holds the rest.
func addSchedule(schedule []int64, v *queueView) {
	prev := v.counts.DelayedDue
	for i, upTo := range v.dueBy {
		schedule[i] += upTo - prev
		prev = upTo
	}
	schedule[len(v.dueBy)] += v.counts.Delayed - prev
}

// addClasses counts the classes of the queue's first jobs by state.
func (s *Source) addClasses(classes map[[2]string]*snapshot.ClassCounts, name string, v *queueView, now time.Time) {
	get := func(class string) *snapshot.ClassCounts {
		k := [2]string{name, class}
		if classes[k] == nil {
			classes[k] = &snapshot.ClassCounts{Queue: name, Class: class}
		}
		return classes[k]
	}
	for _, e := range v.ready {
		get(e.class).Ready++
	}
	for _, e := range v.delayed {
		if e.score <= now.Unix() {
			get(e.class).Ready++
		} else {
			get(e.class).Delayed++
		}
	}
	for _, e := range v.reserved {
		if s.expired(e, now) {
			get(e.class).Expired++
		} else {
			get(e.class).Reserved++
		}
	}
}

func (s *Source) expired(e entry, now time.Time) bool { return s.expires && e.score <= now.Unix() }

// reservedAt is when a reservation was made or last extended: its expiry
// less retry_after (with retry_after null, the score is the pop's time).
func (s *Source) reservedAt(e entry) time.Time {
	if !s.expires {
		return time.Unix(e.score, 0)
	}
	return time.Unix(e.score, 0).Add(-s.retryAfter)
}

func (s *Source) reservedJob(queue string, e entry, now time.Time) snapshot.ReservedJob {
	return snapshot.ReservedJob{JobID: e.id, UUID: e.uuid, Queue: queue, Class: e.class, Attempts: int(e.attempts),
		ReservedAt: s.reservedAt(e), Expired: s.expired(e, now)}
}
