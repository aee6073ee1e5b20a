package redis

import (
	"context"
	"errors"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// The wait between claims: instead of sleeping --sleep, the worker blocks
// on the queues' :notify lists (BLPOP), which every push of Laravel's
// (and every migration of a delayed job) fills with a token, so a job
// pushed by PHP starts within milliseconds and an idle worker sends one
// BLPOP per --sleep. The token is settled as Laravel's block_for worker
// settles it (RedisQueue::retrieveNextJob: BLPOP, then one pop): the pop
// that follows takes one more token if it finds a job; if it finds only
// jobs it leaves in place, the token goes back (so that a PHP worker
// blocked on the list wakes for them); if it finds nothing, the token was
// for a job another worker took and is dropped, as Laravel drops it.

var _ jobqueue.Waiter = (*Store)(nil)

// WaitForJob blocks on the notify lists of queues for at most d, and no
// later than the earliest delayed job's due time (or reservation's
// expiry), which the next claim migrates. A queue whose last claim left
// a job in place is not waited on: its list holds tokens for jobs this
// worker leaves, which would wake it at once, again and again. With no
// queue left to wait on, or queues on different cluster slots, it is
// jobqueue.ErrNotSupported and the worker sleeps.
func (s *Store) WaitForJob(ctx context.Context, queues []string, d time.Duration) (bool, error) {
	waitOn := queues
	if s.heads.viewed.Load() > 0 {
		waitOn = nil
		for _, queue := range queues {
			if !s.heads.has(queue) {
				waitOn = append(waitOn, queue)
			}
		}
	}
	if len(waitOn) == 0 {
		return false, jobqueue.ErrNotSupported
	}
	until := time.Now().Add(d)
	due, ok, err := s.q.NextDue(ctx, queues)
	if err != nil {
		return false, err
	}
	if ok && due.Before(until) {
		until = due
	}
	if !time.Now().Before(until) {
		return true, nil // a delayed job is due: the claim migrates it
	}
	queue, woken, err := s.waiter.Wait(ctx, waitOn, until)
	switch {
	case errors.Is(err, redisproto.ErrCrossSlot):
		return false, jobqueue.ErrNotSupported
	case err != nil:
		return false, err
	case !woken:
		// Claim at once when the wait ended because a delayed job is due.
		return ok && !due.After(until) && !time.Now().Before(until), nil
	}
	s.mu.Lock()
	s.tokens[queue]++
	s.mu.Unlock()
	return true, nil
}

// settleToken settles the token a wait took for queue once a claim has
// popped it: kept (the pop took its own too) when the pop took a job,
// given back when it left a job in place, dropped when the queue was
// empty.
func (s *Store) settleToken(ctx context.Context, queue string, res redisproto.PopResult) {
	s.mu.Lock()
	n := s.tokens[queue]
	delete(s.tokens, queue)
	s.mu.Unlock()
	if n == 0 || len(res.Jobs) > 0 || res.Head == nil {
		return
	}
	for range n {
		if err := s.q.Handback(ctx, queue); err != nil {
			s.log.Warn().Err(err).Str("queue", queue).Msg("handing a notify token back failed; a PHP worker blocked on the queue wakes at its block_for")
			return
		}
	}
}
