package redisproto

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/redis/go-redis/v9"
)

// ErrReservationLost means the job's reserved member is no longer in the
// reserved set: its reservation expired and a pop (PHP's or Go's) moved
// it back to the list, it was deleted or released already, or queue:clear
// ran. Nothing was written; the job belongs to whoever popped it next. It
// is a jobqueue.ErrReservationLost (errors.Is), as the Store contract
// reports it.
var ErrReservationLost = fmt.Errorf("redisqueue: its reserved member is gone (it expired after retry_after and a pop moved it back, or the queue was cleared): %w", jobqueue.ErrReservationLost)

// ErrCrossSlot means a script would touch keys in different cluster
// slots, which Redis Cluster refuses.
var ErrCrossSlot = errors.New("redisqueue: the keys are in different Redis Cluster slots")

// errNotReserved is a write about a job no pop returned.
var errNotReserved = errors.New("redisqueue: the job has no reserved member (pass a job returned by Pop)")

// Delete removes finished jobs (RedisQueue::deleteReserved: ZREM of the
// reserved member) and returns those whose reservation was lost, which it
// left alone. Each job is one ZREM, the command PHP sends; several go in
// one pipeline (one round trip; a ZREM costs the server half of what the
// same ZREM costs from a script, which is what deleted them before). On
// an error nothing may be assumed deleted, nor left.
func (q *Queue) Delete(ctx context.Context, jobs ...*Job) (lost []*Job, err error) {
	if err := checkReserved(jobs); err != nil {
		return nil, err
	}
	if len(jobs) == 1 {
		n, err := q.rdb.ZRem(ctx, q.keys(jobs[0].Queue).Reserved, jobs[0].Reserved).Result()
		if err != nil {
			return nil, q.wrap(err)
		}
		if n == 0 {
			lost = append(lost, jobs[0])
		}
		return lost, nil
	}
	cmds := make([]*redis.IntCmd, len(jobs))
	_, err = q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, j := range jobs {
			cmds[i] = p.ZRem(ctx, q.keys(j.Queue).Reserved, j.Reserved)
		}
		return nil
	})
	if err != nil {
		return nil, q.wrap(err)
	}
	for i, c := range cmds {
		if c.Val() == 0 {
			lost = append(lost, jobs[i])
		}
	}
	return lost, nil
}

// Release is RedisQueue::deleteAndRelease, fenced: the reserved member
// (attempts already counted) moves from the reserved set to the delayed
// set, ready at now + delay (whole seconds), in one script. It becomes
// ready at the next pop's migration, even with delay 0, as in Laravel. If
// the member is gone nothing is written and ErrReservationLost returned
// (Laravel adds it to the delayed set anyway: a second copy).
func (q *Queue) Release(ctx context.Context, job *Job, delay time.Duration) error {
	if err := checkReserved([]*Job{job}); err != nil {
		return err
	}
	k := q.keys(job.Queue)
	n, err := releaseScript.Run(ctx, q.rdb, []string{k.Delayed, k.Reserved}, job.Reserved, q.now().Unix()+seconds(delay)).Int64()
	if err != nil {
		return q.wrap(err)
	}
	if n == 0 {
		return ErrReservationLost
	}
	return nil
}

// Unreserve gives popped jobs back untouched: each whose reserved member
// is still there leaves the reserved set and its original payload (the
// raw bytes, attempts as they were) goes back on the head of the list,
// with the notify token its pop took. Jobs popped together go back in
// their order. A pop takes the head, so the head is exactly where the job
// was; jobs behind it that other workers popped meanwhile stay popped.
// PHP's next pop takes it as if it had never been popped (attempts()
// counts from the same number). Jobs are given in pop order; it returns
// those whose reservation was lost (left alone).
func (q *Queue) Unreserve(ctx context.Context, jobs ...*Job) (lost []*Job, err error) {
	if err := checkReserved(jobs); err != nil {
		return nil, err
	}
	for _, group := range byQueue(jobs) {
		k := q.keys(group[0].Queue)
		args := make([]any, 0, 2*len(group))
		for _, j := range group {
			args = append(args, j.Reserved, j.Payload)
		}
		flags, err := unreserveScript.Run(ctx, q.rdb, []string{k.Ready, k.Reserved, k.Notify}, args...).Int64Slice()
		if err != nil {
			return lost, q.wrap(err)
		}
		for i, f := range flags {
			if f == 0 {
				lost = append(lost, group[i])
			}
		}
	}
	return lost, nil
}

// Extend refreshes the reservations of running jobs to now + retry_after
// (never shortening one), so no pop moves them back while they run, and
// returns copies of those it refreshed with their new ReservedUntil. A
// job left out lost its reservation and was not touched (a member that
// is gone is never added back). Laravel has no such call: PHP workers
// only see the later expiry, as after a later pop. On an error it returns
// the jobs refreshed before it; the rest are in an unknown state.
func (q *Queue) Extend(ctx context.Context, jobs ...*Job) (refreshed []*Job, err error) {
	if err := checkReserved(jobs); err != nil {
		return nil, err
	}
	until := q.now().Unix() + q.retrySeconds
	for _, group := range byQueue(jobs) {
		k := q.keys(group[0].Queue)
		args := append([]any{until}, members(group)...)
		scores, err := extendScript.Run(ctx, q.rdb, []string{k.Reserved}, args...).Int64Slice()
		if err != nil {
			return refreshed, q.wrap(err)
		}
		for i, score := range scores {
			if score != 0 {
				c := *group[i]
				c.ReservedUntil = score
				refreshed = append(refreshed, &c)
			}
		}
	}
	return refreshed, nil
}

// Complete is a finished job's removal (ZREM of its reserved member)
// together with the jobs that follow it (a chain's next link; an empty
// Queue is the connection's default queue, a Delay pushes it delayed), all
// or nothing: they are pushed
// only if the job still held its reservation, else ErrReservationLost
// and nothing is written. Laravel pushes a chain's next link from inside
// the job and deletes the job afterwards, so a job that lost its
// reservation pushes the link twice. On a cluster every key must be in
// the job's slot; else ErrCrossSlot, and nothing is written (push first,
// then Delete, is Laravel's order).
func (q *Queue) Complete(ctx context.Context, job *Job, next ...jobqueue.PushItem) error {
	if err := checkReserved([]*Job{job}); err != nil {
		return err
	}
	if len(next) == 0 {
		lost, err := q.Delete(ctx, job)
		if err == nil && len(lost) > 0 {
			err = ErrReservationLost
		}
		return err
	}
	for _, p := range next {
		if err := checkPayload(p.Payload); err != nil {
			return err
		}
	}
	keys := []string{q.keys(job.Queue).Reserved}
	args := []any{job.Reserved}
	now := q.now().Unix()
	for _, p := range next {
		k := q.keys(p.Queue)
		keys = append(keys, k.Ready, k.Notify, k.Delayed)
		score := ""
		if p.Delay > 0 {
			score = fmt.Sprint(now + seconds(p.Delay))
		}
		args = append(args, p.Payload, score)
	}
	if !q.cfg.sameSlot(keys...) {
		return ErrCrossSlot
	}
	n, err := completeScript.Run(ctx, q.rdb, keys, args...).Int64()
	if err != nil {
		return q.wrap(err)
	}
	if n == 0 {
		return ErrReservationLost
	}
	return nil
}

// checkReserved refuses jobs that carry no fence.
func checkReserved(jobs []*Job) error {
	for _, j := range jobs {
		if j == nil || j.Reserved == "" {
			return errNotReserved
		}
	}
	return nil
}

// byQueue groups jobs by queue, keeping their order within each queue
// and the order of first appearance between queues.
func byQueue(jobs []*Job) [][]*Job {
	var groups [][]*Job
	index := map[string]int{}
	for _, j := range jobs {
		i, ok := index[j.Queue]
		if !ok {
			i = len(groups)
			index[j.Queue] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], j)
	}
	return groups
}

func members(jobs []*Job) []any {
	out := make([]any, len(jobs))
	for i, j := range jobs {
		out[i] = j.Reserved
	}
	return out
}
