package redis

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// maxBlock bounds one blocking claim when block_for is 0 (Laravel's
// "forever"): a claim that never returned would never migrate delayed
// and expired jobs nor let the worker see queue:restart.
const maxBlock = 5 * time.Second

// Claim pops up to n jobs from the first of queues that has any, each
// exactly as Laravel's pop (attempt counted, reserved for retry_after).
// A pop leaves in place the jobs it must leave (a class not in
// opts.DisplayNames or in opts.ExcludeDisplayNames, a job given back,
// opts.ExcludeIDs) and takes the jobs behind them, within the lookahead
// (redisproto.DefaultLookahead); with none found there the claim goes on
// to the next queue. When every queue is empty and
// the connection has block_for, it waits on the first queue. A job the
// pop could not read comes back as a *jobqueue.ClaimError (the jobs
// popped with it are given back untouched) for the worker to fail.
func (s *Store) Claim(ctx context.Context, queues []string, n int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	if len(queues) == 0 {
		return nil, nil
	}
	pop := s.popOptions(n, opts)
	for _, queue := range queues {
		pop.ReportLooked = s.heads.viewed.Load() == 0 || s.heads.wantReport(queue)
		res, err := s.q.Pop(ctx, queue, pop)
		if err != nil {
			return nil, err
		}
		s.settleToken(ctx, queue, res)
		if rows, err := s.claimed(ctx, queue, res, pop.ReportLooked); len(rows) > 0 || err != nil {
			return rows, err
		}
	}
	if !s.blocking {
		return nil, nil
	}
	return s.blockingClaim(ctx, queues[0], pop)
}

// blockingClaim is Laravel's blocking pop on the first queue.
func (s *Store) blockingClaim(ctx context.Context, queue string, pop redisproto.PopOptions) ([]jobqueue.JobRow, error) {
	pop.Block = true
	popCtx := ctx
	if *s.q.Config().BlockFor == 0 {
		var cancel context.CancelFunc
		popCtx, cancel = context.WithTimeout(ctx, maxBlock)
		defer cancel()
	}
	pop.ReportLooked = s.heads.wantReport(queue)
	res, err := s.q.Pop(popCtx, queue, pop)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, nil // maxBlock passed
		}
		return nil, err
	}
	return s.claimed(ctx, queue, res, pop.ReportLooked)
}

// popOptions turns the worker's claim options into a pop's.
func (s *Store) popOptions(n int, opts jobqueue.ClaimOptions) redisproto.PopOptions {
	pop := redisproto.PopOptions{Max: max(n, 1), Migrated: s.horizon != nil}
	if s.haveGivenBack.Load() {
		pop.LeaveIDs = s.leaveIDs(opts.ExcludeIDs)
	}
	f := s.lastFilter.Load()
	if f == nil || !slices.Equal(f.names, opts.DisplayNames) || !slices.Equal(f.exclude, opts.ExcludeDisplayNames) {
		f = newPopFilter(opts.DisplayNames, opts.ExcludeDisplayNames)
		s.lastFilter.Store(f)
	}
	pop.Only, pop.Except = f.only, f.except
	return pop
}

// popFilter is the worker's class lists as a pop's Only and Except. The
// worker passes the same lists claim after claim, so the last one is kept
// (Store.lastFilter) and used while the lists are equal, compared by
// content; the pops share its slices and never write them.
type popFilter struct {
	names, exclude []string // copies of the lists it was made from
	only, except   []string
}

func newPopFilter(names, exclude []string) *popFilter {
	f := &popFilter{names: slices.Clone(names), exclude: slices.Clone(exclude)}
	switch {
	case len(names) > 0:
		f.only = slices.DeleteFunc(slices.Clone(names), func(name string) bool {
			return slices.ContainsFunc(exclude, func(x string) bool { return strings.EqualFold(x, name) })
		})
		if len(f.only) == 0 {
			// Every listed class is excluded: match nothing.
			f.only = []string{"\x00"}
		}
	case len(exclude) > 0:
		f.except = f.exclude
	}
	return f
}

// claimed turns a pop's result into rows, noting the jobs left in place
// (reported: the pop reported each job its lookahead passed). A job the
// pop could not read makes the claim a ClaimError: the others go back to
// the head of the list untouched.
func (s *Store) claimed(ctx context.Context, queue string, res redisproto.PopResult, reported bool) ([]jobqueue.JobRow, error) {
	if res.Head != nil || s.heads.viewed.Load() > 0 {
		s.heads.note(s, queue, res, reported)
	}
	var bad *redisproto.Job
	var back []*redisproto.Job
	for _, j := range res.Jobs {
		if j.Err != nil && bad == nil {
			bad = j
			continue
		}
		back = append(back, j)
	}
	if bad == nil {
		if s.horizon != nil {
			s.horizonReserved(ctx, res, queue, res.Jobs)
		}
		rows := make([]jobqueue.JobRow, len(res.Jobs))
		for i, j := range res.Jobs {
			rows[i] = s.row(j)
		}
		return rows, nil
	}
	// The jobs go back untouched and the unreadable one has no record.
	s.horizonReserved(ctx, res, queue, nil)
	if len(back) > 0 {
		if _, err := s.q.Unreserve(ctx, back...); err != nil {
			// They come back after retry_after, as after a crash.
			s.log.Error().Err(err).Str("queue", queue).Int("jobs", len(back)).
				Msg("giving back the jobs popped with an unreadable one failed; they come back after retry_after")
		}
	}
	return nil, &jobqueue.ClaimError{Job: s.row(bad), Err: bad.Err}
}

// CountClaimable counts what the pops of Claim could find now: per queue
// the list and the due delayed and expired jobs, but nothing for a queue
// whose head is a job the claim leaves in place (the worker asks after a
// claim that took nothing, whose lookahead found nothing behind it).
func (s *Store) CountClaimable(ctx context.Context, queues []string, opts jobqueue.ClaimOptions) (int64, error) {
	pop := s.popOptions(1, opts)
	var total int64
	for _, queue := range queues {
		c, err := s.q.Counts(ctx, queue)
		if err != nil {
			return 0, err
		}
		if c.Poppable() == 0 {
			continue
		}
		if c.Ready > 0 {
			head, err := s.q.Client().LIndex(ctx, s.q.Config().Keys(queue).Ready, 0).Result()
			if err == nil && leaves(pop, head) {
				continue
			}
		}
		total += c.Poppable()
	}
	return total, nil
}

// leaves reports whether a pop with these options stops at head.
func leaves(pop redisproto.PopOptions, head string) bool {
	var p struct {
		DisplayName any `json:"displayName"`
		ID          any `json:"id"`
	}
	if json.Unmarshal([]byte(head), &p) != nil {
		return false // unreadable: popped whatever the filter
	}
	name, _ := p.DisplayName.(string)
	id, _ := p.ID.(string)
	equal := func(x string) bool { return strings.EqualFold(x, name) }
	switch {
	case len(pop.Only) > 0 && !slices.ContainsFunc(pop.Only, equal):
		return true
	case slices.ContainsFunc(pop.Except, equal):
		return true
	}
	return id != "" && slices.Contains(pop.LeaveIDs, id)
}

// giveBack remembers a job given back, so that claims leave it in place
// while the worker lists its id in ExcludeIDs.
func (s *Store) giveBack(r jobqueue.JobRow) {
	var p struct {
		ID any `json:"id"`
	}
	_ = json.Unmarshal(r.Payload, &p)
	id, _ := p.ID.(string)
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.givenBack[r.ID] = id
	s.haveGivenBack.Store(true)
}

// leaveIDs maps the worker's excluded ids to payload ids, and forgets the
// jobs the worker no longer excludes.
func (s *Store) leaveIDs(exclude []int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.givenBack) == 0 {
		return nil
	}
	keep := make(map[int64]string, len(exclude))
	var ids []string
	for _, id := range exclude {
		if pid, ok := s.givenBack[id]; ok {
			keep[id] = pid
			ids = append(ids, pid)
		}
	}
	s.givenBack = keep
	s.haveGivenBack.Store(len(keep) > 0)
	return ids
}
