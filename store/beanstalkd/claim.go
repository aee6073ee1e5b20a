package beanstalkd

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/beanstalkproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// How a claim reserves. Laravel's pop is `watch` the tube, `ignore` the
// others, `reserve-with-timeout block_for`: it takes whatever job comes
// first, and a reserve counts an attempt that nothing can take back. A
// Go worker must never reserve a job it will not run (a class it has no
// handler for, a job it gave back): so a claim looks at the head of the
// tube first (peek-ready, which reserves nothing) and reserves that very
// job (reserve-job, beanstalkd 1.12+). reserve-job also takes a delayed
// or buried job, so the job's stats are read in the same exchange before
// and after: it was ready, and no other reserve came between, or the
// claim puts it back as it was.

var statsCmd = beanstalkproto.Cmd{Line: "list-tubes-watched"}

// pollEvery is how often a claim that waits (block_for) looks again.
const pollEvery = 50 * time.Millisecond

// maxBlock bounds one waiting claim, so that the worker sees
// queue:restart and its own stop in time.
const maxBlock = 5 * time.Second

// raceTries bounds how often a claim takes the next head after another
// worker took the one it peeked.
const raceTries = 20

// Claim reserves up to n jobs of the first tube of queues that has a
// claimable one at its head, each counting an attempt as Laravel's
// reserve does (stats-job's reserves). A head the claim must leave (a
// class not in opts.DisplayNames or in opts.ExcludeDisplayNames, a job
// given back) stops the claim on that tube: beanstalkd shows no job
// behind the head without reserving it. When every tube is empty and the
// connection has block_for, the claim looks again every pollEvery, up to
// block_for (at most maxBlock).
func (s *Store) Claim(ctx context.Context, queues []string, n int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	if len(queues) == 0 {
		return nil, nil
	}
	c, err := s.pool.claimConn(ctx)
	if err != nil {
		return nil, err
	}
	f := s.filter(opts)
	deadline := s.now().Add(min(s.cfg.BlockFor, maxBlock))
	for {
		rows, err := s.claimQueues(ctx, c, queues, max(n, 1), f)
		if len(rows) > 0 || err != nil || !s.now().Before(deadline) {
			return rows, err
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(pollEvery):
		}
	}
}

// claimQueues is one pass over the tubes in order.
func (s *Store) claimQueues(ctx context.Context, c *conn, queues []string, n int, f filter) ([]jobqueue.JobRow, error) {
	for _, queue := range queues {
		tube := s.tube(queue)
		var rows []jobqueue.JobRow
		for len(rows) < n {
			row, ok, err := s.claimHead(ctx, c, tube, f)
			if err != nil {
				if len(rows) > 0 {
					return rows, nil // the next claim sees the error again
				}
				return nil, err
			}
			if !ok {
				break
			}
			rows = append(rows, row)
		}
		if len(rows) > 0 {
			return rows, nil
		}
	}
	return nil, nil
}

// claimHead reserves the head of tube when the claim may take it.
func (s *Store) claimHead(ctx context.Context, c *conn, tube string, f filter) (jobqueue.JobRow, bool, error) {
	if err := c.lock(ctx); err != nil {
		return jobqueue.JobRow{}, false, err
	}
	defer c.unlock()
	for range raceTries {
		head, err := s.peekHead(c, tube)
		if err != nil || head == nil {
			s.noteLeft(tube, nil, "")
			return jobqueue.JobRow{}, false, err
		}
		if reason := f.leaves(head); reason != "" {
			s.noteLeft(tube, head, reason)
			return jobqueue.JobRow{}, false, nil
		}
		row, ok, err := s.reserveChecked(c, tube, head.ID)
		if err != nil || ok {
			s.noteLeft(tube, nil, "")
			return row, ok, err
		}
		// Another worker took it (or it moved): look at the new head.
	}
	return jobqueue.JobRow{}, false, nil
}

// peekHead is the ready job at the head of tube, nil when none (the
// caller holds c).
func (s *Store) peekHead(c *conn, tube string) (*beanstalkproto.Job, error) {
	if err := c.use(tube); err != nil {
		return nil, err
	}
	j, err := c.c.PeekReady()
	if errors.Is(err, beanstalkproto.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &j, nil
}

// reserveChecked reserves job id, which a peek saw ready, and checks by
// its stats around the reserve that it was still ready and untouched;
// ok is false when another worker had taken it. A job that turns out to
// have been delayed or buried meanwhile is put back so (its attempt
// counted: beanstalkd cannot take a reserve back).
func (s *Store) reserveChecked(c *conn, tube string, id uint64) (jobqueue.JobRow, bool, error) {
	replies, err := c.c.Do(beanstalkproto.StatsJobCmd(id), beanstalkproto.ReserveJobCmd(id), beanstalkproto.StatsJobCmd(id))
	if err != nil {
		return jobqueue.JobRow{}, false, err
	}
	if errors.Is(replies[1].Err("reserve-job", "RESERVED"), beanstalkproto.ErrNotFound) {
		return jobqueue.JobRow{}, false, nil
	}
	if err := replies[1].Err("reserve-job", "RESERVED"); err != nil {
		return jobqueue.JobRow{}, false, err
	}
	before, errBefore := beanstalkproto.ParseJobStats(replies[0].Data)
	after, err := beanstalkproto.ParseJobStats(replies[2].Data)
	if err != nil {
		return jobqueue.JobRow{}, false, err
	}
	if errBefore != nil || before.State != "ready" || after.Reserves != before.Reserves+1 || before.Tube != tube {
		s.putBack(c, id, before, after)
		return jobqueue.JobRow{}, false, nil
	}
	s.warnShortTTR(tube, after)
	h := &hold{conn: c, reserves: after.Reserves, pri: after.Pri, ttr: after.TTR}
	s.mu.Lock()
	s.held[id] = h
	s.mu.Unlock()
	now := s.now().Unix()
	return jobqueue.JobRow{
		ID: int64(id), Queue: tube, Payload: replies[1].Data, Attempts: int(after.Reserves),
		ReservedAt: &now, Reservation: reservation(c, after.Reserves), AvailableAt: now - after.Age, CreatedAt: now - after.Age,
	}, true, nil
}

// putBack undoes a reserve-job that raced with another worker: the job
// goes back to the state the first stats saw (delayed for what was left,
// buried), or to ready when another reserve came between.
func (s *Store) putBack(c *conn, id uint64, before, after beanstalkproto.JobStats) {
	cmd := beanstalkproto.ReleaseCmd(id, after.Pri, 0)
	switch before.State {
	case "delayed":
		cmd = beanstalkproto.ReleaseCmd(id, after.Pri, max(before.TimeLeft, 0))
	case "buried":
		cmd = beanstalkproto.BuryCmd(id, before.Pri)
	}
	replies, err := c.c.Do(cmd)
	if err == nil {
		err = replies[0].Err(cmd.Line, "RELEASED", "BURIED")
	}
	ev := s.log.Warn()
	if err != nil {
		ev = s.log.Error().Err(err)
	}
	ev.Uint64("id", id).Str("tube", after.Tube).Str("was", before.State).
		Msg("a job another worker handled between a claim's peek and its reserve was reserved, and put back as it was; its reserves count grew by one")
}

// warnShortTTR says when a job's time-to-run is shorter than a third of
// retry_after: pushed under another retry_after, it can run out before
// the worker's first touch.
func (s *Store) warnShortTTR(tube string, st beanstalkproto.JobStats) {
	if time.Duration(st.TTR)*time.Second*3 >= s.cfg.RetryAfter {
		return
	}
	s.log.Warn().Uint64("id", st.ID).Str("tube", tube).Int64("ttr", st.TTR).Dur("retry_after", s.cfg.RetryAfter).
		Msg("the job's time-to-run is shorter than a third of the connection's retry_after (pushed with another retry_after): it may go back to other workers before laraworker touches it")
}

// filter is a claim's options as the heads it leaves.
type filter struct {
	classes   jobqueue.ClaimOptions // the classes to take (Takes)
	givenBack map[uint64]bool
}

// filter maps the worker's options, and forgets the jobs given back that
// the worker no longer excludes.
func (s *Store) filter(opts jobqueue.ClaimOptions) filter {
	f := filter{classes: jobqueue.ClaimOptions{DisplayNames: opts.DisplayNames, ExcludeDisplayNames: opts.ExcludeDisplayNames}}
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := map[int64]uint64{}
	for _, id := range opts.ExcludeIDs {
		if copyID, ok := s.givenBack[id]; ok {
			keep[id] = copyID
			if f.givenBack == nil {
				f.givenBack = map[uint64]bool{}
			}
			f.givenBack[copyID] = true
		} else {
			// A row the worker gave back whose job kept its id.
			if f.givenBack == nil {
				f.givenBack = map[uint64]bool{}
			}
			f.givenBack[uint64(id)] = true
		}
	}
	s.givenBack = keep
	return f
}

// leaves says why a claim leaves head in place ("" when it takes it).
func (f filter) leaves(head *beanstalkproto.Job) string {
	if f.givenBack[head.ID] {
		return jobqueue.LeftGivenBack
	}
	if !f.classes.FiltersClasses() {
		return ""
	}
	name, ok := displayName(head.Body)
	if !ok {
		return "" // unreadable: claimed, for the worker to fail
	}
	if !f.classes.Takes(name) {
		return jobqueue.LeftClass
	}
	return ""
}

// displayName is a payload's displayName.
func displayName(body []byte) (string, bool) {
	var p struct {
		DisplayName any `json:"displayName"`
	}
	if json.Unmarshal(body, &p) != nil {
		return "", false
	}
	name, ok := p.DisplayName.(string)
	return name, ok
}

// noteLeft records what the last claim of tube left at its head (nil:
// nothing).
func (s *Store) noteLeft(tube string, head *beanstalkproto.Job, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if head == nil {
		delete(s.left, tube)
		return
	}
	name, _ := displayName(head.Body)
	s.left[tube] = jobqueue.LeftJobs{Queue: tube, Class: name, Reason: reason, Jobs: 1, More: true}
}

// LeftNow is jobqueue.LeftReporter's: the heads the last claims left.
func (s *Store) LeftNow() []jobqueue.LeftJobs {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]jobqueue.LeftJobs, 0, len(s.left))
	for _, l := range s.left {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b jobqueue.LeftJobs) int { return strings.Compare(a.Queue, b.Queue) })
	return out
}

// CountClaimable counts the ready jobs of the tubes whose head a claim
// would take (stats-tube; a tube whose head it leaves counts nothing).
func (s *Store) CountClaimable(ctx context.Context, queues []string, opts jobqueue.ClaimOptions) (int64, error) {
	c, err := s.pool.adminConn(ctx)
	if err != nil {
		return 0, err
	}
	f := s.filter(opts)
	if err := c.lock(ctx); err != nil {
		return 0, err
	}
	defer c.unlock()
	var total int64
	for _, queue := range queues {
		tube := s.tube(queue)
		head, err := s.peekHead(c, tube)
		if err != nil {
			return 0, err
		}
		if head == nil || f.leaves(head) != "" {
			continue
		}
		st, err := c.c.StatsTube(tube)
		if err != nil && !errors.Is(err, beanstalkproto.ErrNotFound) {
			return 0, err
		}
		total += max(st.Ready, 1)
	}
	return total, nil
}
