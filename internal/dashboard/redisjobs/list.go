package redisjobs

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/redisproto"
)

// List lists the first jobs the last refresh read, queue by queue: in
// each, the list in pop order, the due delayed jobs (which the next pop
// moves behind the list), the other delayed jobs soonest first, then the
// reserved ones. The cursor is how many matching jobs came before.
func (s *Source) List(_ context.Context, f snapshot.JobFilter, cursor string, limit int) ([]snapshot.JobRow, string, error) {
	skip, _ := strconv.Atoi(cursor)
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []snapshot.JobRow
	n := 0
	for _, name := range slices.Sorted(maps.Keys(s.queues)) {
		if f.Queue != "" && f.Queue != name {
			continue
		}
		for _, j := range s.inOrder(name, s.queues[name], now) {
			if !matches(j, f) {
				continue
			}
			if n++; n <= skip {
				continue
			}
			if len(out) == limit {
				return out, strconv.Itoa(skip + limit), nil
			}
			out = append(out, j.row)
		}
	}
	return out, "", nil
}

// listed is a job of the list with its state.
type listed struct {
	row   snapshot.JobRow
	state string
}

func matches(j listed, f snapshot.JobFilter) bool {
	return (f.Class == "" || j.row.Class == f.Class) && (f.State == "" || j.state == f.State) &&
		(f.Tag == "" || slices.Contains(j.row.Tags, f.Tag))
}

// inOrder is a queue's first jobs in the order workers take them.
func (s *Source) inOrder(name string, v *queueView, now time.Time) []listed {
	var due, later, out []listed
	for _, e := range v.ready {
		out = append(out, listed{s.row(name, e), "ready"})
	}
	for _, e := range v.delayed {
		r := s.row(name, e)
		r.AvailableAt = time.Unix(e.score, 0)
		if e.score <= now.Unix() {
			due = append(due, listed{r, "ready"})
		} else {
			later = append(later, listed{r, "delayed"})
		}
	}
	out = append(append(out, due...), later...)
	for _, e := range v.reserved {
		r := s.row(name, e)
		at := s.reservedAt(e)
		r.ReservedAt = &at
		out = append(out, listed{r, "reserved"})
	}
	return out
}

func (s *Source) row(queue string, e entry) snapshot.JobRow {
	r := snapshot.JobRow{JobID: e.id, Queue: queue, Attempts: e.attempts, UUID: e.uuid, Class: e.class, Tags: e.tags}
	if e.created > 0 {
		r.CreatedAt = time.Unix(e.created, 0)
		r.AvailableAt = time.Unix(e.created+e.delay, 0)
	}
	return r
}

// redisID is the shape of the "id" Laravel gives a Redis job
// (Str::random(32)), or Horizon's (the uuid).
var redisID = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// Job reads one of the first jobs of a queue whole: a Redis job can only
// be found by reading the jobs before it, so a job further down its list
// (or taken by a worker meanwhile) is not found.
func (s *Source) Job(ctx context.Context, ref snapshot.JobRef) (snapshot.JobRow, error) {
	if ref.Queue == "" || !redisID.MatchString(ref.ID) {
		return snapshot.JobRow{}, fmt.Errorf("%w: jobs on a Redis queue have no number; open one from the Jobs page, which names it by its payload's id and its queue", snapshot.ErrNotFound)
	}
	v, err := s.q.Peek(ctx, ref.Queue, redisproto.PeekOptions{Head: s.opt.Head, Reserved: snapshot.MaxReservedShown})
	if err != nil {
		return snapshot.JobRow{}, err
	}
	for _, p := range v.Ready {
		if e := fromList(p, false); e.id == ref.ID {
			return s.whole(ref.Queue, e, p.Head), nil
		}
	}
	for _, p := range v.Delayed {
		if e := fromList(p, false); e.id == ref.ID {
			r := s.whole(ref.Queue, e, p.Head)
			r.AvailableAt = time.Unix(e.score, 0)
			return r, nil
		}
	}
	for _, p := range v.Reserved {
		if e := fromReserved(p, false); e.id == ref.ID {
			r := s.whole(ref.Queue, e, p.Head)
			at := s.reservedAt(e)
			r.ReservedAt = &at
			return r, nil
		}
	}
	return snapshot.JobRow{}, fmt.Errorf("%w: job %s is not among the first %d jobs of queue %q (a worker took it, or it is further down the list)",
		snapshot.ErrNotFound, ref.ID, s.opt.Head, ref.Queue)
}

func (s *Source) whole(queue string, e entry, raw string) snapshot.JobRow {
	r := s.row(queue, e)
	r.Payload = []byte(raw)
	return r
}
