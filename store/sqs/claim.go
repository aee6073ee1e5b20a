package sqs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/internal/sqsproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// multiQueueWait bounds the long poll on the first queue when the worker
// serves several: a job on another queue waits at most this long (PHP's
// worker sleeps 3 s between empty pops).
const multiQueueWait = 2 * time.Second

// Claim receives up to n jobs from the first of queues that has any, as
// SqsQueue::pop does (the attempt is ApproximateReceiveCount, the
// reservation the queue's visibility timeout), up to 10 a request. When
// every queue is empty it long-polls the first one. A job the worker does
// not run (a class not in opts.DisplayNames or in opts.ExcludeDisplayNames,
// one it gave back, opts.ExcludeIDs) is given back at once (see
// giveBack). On a FIFO queue it receives one message a request: a request
// may return several of one group, which must then run one after the
// other.
func (s *Store) Claim(ctx context.Context, queues []string, n int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	if len(queues) == 0 {
		return nil, nil
	}
	leave := s.leaveIDs(opts.ExcludeIDs)
	for _, name := range queues {
		url := s.q.URL(name)
		msgs, err := s.receive(ctx, url, n, 0)
		if err != nil {
			return nil, err
		}
		if rows, err := s.take(ctx, url, msgs, opts, leave); len(rows) > 0 || err != nil {
			return rows, err
		}
	}
	first := s.q.URL(queues[0])
	if s.wait <= 0 || s.isIdle(first) {
		return nil, nil
	}
	wait := s.wait
	if len(queues) > 1 {
		wait = min(wait, multiQueueWait)
	}
	msgs, err := s.longPoll(ctx, first, n, wait)
	if err != nil || len(msgs) == 0 {
		return nil, err
	}
	return s.take(ctx, first, msgs, opts, leave)
}

// receive takes up to n messages of a queue (10 a request; one a request
// on a FIFO queue, up to 10 requests while they find any).
func (s *Store) receive(ctx context.Context, url string, n int, wait time.Duration) ([]sqsproto.Message, error) {
	if !sqsproto.IsFIFO(url) {
		return s.q.Receive(ctx, url, min(n, sqsproto.MaxBatch), wait)
	}
	var out []sqsproto.Message
	for len(out) < min(n, sqsproto.MaxBatch) {
		msgs, err := s.q.Receive(ctx, url, 1, wait)
		if err != nil {
			if len(out) > 0 {
				return out, nil // the next claim sees the error again
			}
			return nil, err
		}
		if len(msgs) == 0 {
			break
		}
		out = append(out, msgs...)
		wait = 0
	}
	return out, nil
}

// longPoll waits up to wait for messages on url. A claim whose context
// ends meanwhile returns at once; the poll goes on to its end (SQS may
// have handed it messages already) and gives back what it received.
func (s *Store) longPoll(ctx context.Context, url string, n int, wait time.Duration) ([]sqsproto.Message, error) {
	type result struct {
		msgs []sqsproto.Message
		err  error
	}
	done := make(chan result, 1)
	s.polls.Add(1)
	abandoned := make(chan struct{})
	go func() {
		defer s.polls.Done()
		msgs, err := s.receive(context.WithoutCancel(ctx), url, n, wait)
		select {
		case done <- result{msgs, err}:
		case <-abandoned:
			for _, m := range msgs {
				s.giveBack(context.WithoutCancel(ctx), m, s.isVapor(m))
			}
		}
	}()
	select {
	case r := <-done:
		return r.msgs, r.err
	case <-ctx.Done():
		close(abandoned)
		// The poll may have answered just now.
		select {
		case r := <-done:
			for _, m := range r.msgs {
				s.giveBack(context.WithoutCancel(ctx), m, s.isVapor(m))
			}
		default:
		}
		return nil, ctx.Err()
	}
}

// take turns received messages into rows, giving back those the worker
// does not run. A pointer body whose payload is not in the cache is a
// ClaimError (the worker fails it; the other messages are given back).
func (s *Store) take(ctx context.Context, url string, msgs []sqsproto.Message, opts jobqueue.ClaimOptions, leave map[string]bool) ([]jobqueue.JobRow, error) {
	var rows []jobqueue.JobRow
	var back []sqsproto.Message
	var bad *jobqueue.ClaimError
	for _, m := range msgs {
		h := &held{msg: m, vapor: s.isVapor(m)}
		body, err := s.resolve(ctx, h)
		if err != nil && bad == nil {
			bad = &jobqueue.ClaimError{Job: s.hold(h, m.Body), Err: err}
			continue
		}
		if err != nil || leave[m.ID] || !wanted(body, opts) {
			back = append(back, m)
			continue
		}
		rows = append(rows, s.hold(h, body))
	}
	if bad != nil {
		for _, r := range rows {
			back = append(back, s.heldOf(r).msg)
			s.forget(r)
		}
		rows = nil
	}
	for _, m := range back {
		s.giveBack(ctx, m, s.isVapor(m))
	}
	s.mu.Lock()
	s.idle[url] = len(rows) == 0 && len(back) > 0
	s.mu.Unlock()
	if bad != nil {
		return nil, bad
	}
	return rows, nil
}

// hold records a message handed out and returns its row.
func (s *Store) hold(h *held, body []byte) jobqueue.JobRow {
	id := s.seq.Add(1)
	now := time.Now().Unix()
	attempts := h.msg.ReceiveCount
	if h.vapor {
		// VaporJob::attempts(): the payload's attempts + 1.
		n, _ := sqsproto.VaporAttempts(body)
		attempts = n + 1
	}
	s.mu.Lock()
	s.held[id] = h
	s.mu.Unlock()
	sent := h.msg.SentAt.Unix()
	return jobqueue.JobRow{ID: id, Queue: h.msg.QueueURL, Payload: body, Attempts: attempts,
		ReservedAt: &now, Reservation: h.msg.ReceiptHandle, AvailableAt: sent, CreatedAt: sent}
}

// isVapor: the connection is Vapor's and the message's payload counts
// its attempts (VaporQueue wrote it).
func (s *Store) isVapor(m sqsproto.Message) bool {
	if !s.q.Config().Vapor {
		return false
	}
	_, ok := sqsproto.VaporAttempts(m.Body)
	return ok
}

// resolve is SqsJob::getRawBody: a pointer body (13.9+, with the
// connection's overflow enabled) is read from the cache.
func (s *Store) resolve(ctx context.Context, h *held) ([]byte, error) {
	ov := s.q.Config().Overflow
	if !ov.Enabled {
		return h.msg.Body, nil
	}
	key, ok := sqsproto.Pointer(h.msg.Body)
	if !ok {
		return h.msg.Body, nil
	}
	h.pointer = key
	cache := s.SharedCache()
	if cache == nil {
		return nil, fmt.Errorf("sqsstore: message %s holds a pointer to its payload in the cache (%s), and laraworker does not share the app's cache store", h.msg.ID, key)
	}
	raw, found, err := cache.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("sqsstore: reading the payload of message %s from the cache (%s): %w", h.msg.ID, key, err)
	}
	if !found {
		return nil, fmt.Errorf("sqsstore: the payload of message %s is not in the cache under %s (its pointer body was kept; the cache entry is gone)", h.msg.ID, key)
	}
	v, err := phpserialize.Unserialize(raw)
	if err != nil || v.Kind != phpserialize.KindString {
		return nil, fmt.Errorf("sqsstore: the cache entry %s of message %s is not a serialized string", key, h.msg.ID)
	}
	return v.Str, nil
}

// wanted reports whether the worker runs a payload's class.
func wanted(body []byte, opts jobqueue.ClaimOptions) bool {
	if !opts.FiltersClasses() {
		return true
	}
	name, readable := readDisplayName(body)
	if !readable {
		return true // unreadable: the worker fails it, as PHP's would
	}
	return opts.Takes(name)
}

// displayName is a payload's displayName ("" when it has none).
func displayName(body []byte) string {
	name, _ := readDisplayName(body)
	return name
}

// readDisplayName is a payload's displayName ("" when it has none or it
// is not a string), and whether the payload is JSON at all.
func readDisplayName(body []byte) (name string, readable bool) {
	var p struct {
		DisplayName any `json:"displayName"`
	}
	if json.Unmarshal(body, &p) != nil {
		return "", false
	}
	name, _ = p.DisplayName.(string)
	return name, true
}

// giveBack returns a received message the worker does not run to the
// queue. A standard queue's message received for the first time is sent
// again as it is and the received one deleted: the copy is as if nobody
// had received it (ApproximateReceiveCount 0, Laravel's attempts
// untouched). Otherwise (a FIFO queue, whose group order a copy would
// break; a message received before; Vapor's, which counts attempts in
// the payload) it is made visible at once: SQS then counts one more
// receive, which PHP's worker will count as an attempt.
func (s *Store) giveBack(ctx context.Context, m sqsproto.Message, vapor bool) string {
	// A give-back at shutdown must go through whatever ended the
	// worker's context: a job left in flight waits the whole visibility
	// timeout.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), giveBackTimeout)
	defer cancel()
	if !sqsproto.IsFIFO(m.QueueURL) && !vapor && m.ReceiveCount <= 1 {
		id, err := s.q.Send(ctx, m.QueueURL, m.Body, sqsproto.SendOptions{})
		if err == nil {
			if err := s.q.Delete(ctx, m.QueueURL, m.ReceiptHandle); err != nil {
				s.log.Error().Err(err).Str("queue", m.QueueURL).Str("message_id", m.ID).
					Msg("a job given back was sent again but its first copy could not be deleted: it will run twice")
			}
			return id
		}
		s.log.Warn().Err(err).Str("queue", m.QueueURL).Msg("sending a copy of a job given back failed; making it visible again instead")
	}
	if err := s.q.ChangeVisibility(ctx, m.QueueURL, m.ReceiptHandle, 0); err != nil {
		s.log.Warn().Err(err).Str("queue", m.QueueURL).Str("message_id", m.ID).
			Msg("giving a job back failed; it comes back after the queue's visibility timeout")
	}
	return m.ID
}

// giveBackTimeout bounds one give-back's requests.
const giveBackTimeout = 10 * time.Second

// isIdle: the last claim on url received only jobs it gave back.
func (s *Store) isIdle(url string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idle[url]
}

// leaveIDs maps the worker's excluded row ids to MessageIds, and forgets
// the rows it no longer excludes.
func (s *Store) leaveIDs(exclude []int64) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.givenBack) == 0 {
		return nil
	}
	keep := make(map[int64]string, len(exclude))
	ids := map[string]bool{}
	for _, id := range exclude {
		if mid, ok := s.givenBack[id]; ok {
			keep[id] = mid
			ids[mid] = true
		}
	}
	s.givenBack = keep
	return ids
}

// CountClaimable counts the visible messages of the queues
// (ApproximateNumberOfMessages), but none on a queue whose last claim
// received only jobs it gave back.
func (s *Store) CountClaimable(ctx context.Context, queues []string, _ jobqueue.ClaimOptions) (int64, error) {
	var total int64
	for _, name := range queues {
		url := s.q.URL(name)
		if s.isIdle(url) {
			continue
		}
		a, err := s.q.Attributes(ctx, url)
		if err != nil {
			return 0, err
		}
		total += a.Messages
	}
	return total, nil
}
