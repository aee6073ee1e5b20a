package sqs

import (
	"context"
	"errors"
	"time"

	"github.com/laraworker/laraworker/internal/sqsproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// Delete is SqsJob::delete for finished jobs, in DeleteMessageBatch
// requests (10 a request, per queue), then the overflow payloads' cache
// entries forgotten (13.9+ delete_after_processing). SQS accepts a stale
// receipt handle of a standard queue without saying so: only the
// handles it rejects come back lost (Extend keeps a running job's handle
// valid, so a job outliving its visibility timeout is the case PHP has
// and Go does not).
func (s *Store) Delete(ctx context.Context, rows []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	byURL := map[string][]int{}
	var urls []string
	for i, r := range rows {
		if s.heldOf(r) == nil {
			return nil, errUnknownRow
		}
		if _, ok := byURL[r.Queue]; !ok {
			urls = append(urls, r.Queue)
		}
		byURL[r.Queue] = append(byURL[r.Queue], i)
	}
	var lost []jobqueue.JobRow
	for _, url := range urls {
		idx := byURL[url]
		receipts := make([]string, len(idx))
		for j, i := range idx {
			receipts[j] = rows[i].Reservation
		}
		results, err := s.q.DeleteBatch(ctx, url, receipts)
		for j, res := range results {
			r := rows[idx[j]]
			switch {
			case res == nil && err == nil:
				s.deleted(ctx, r)
			case errors.Is(res, sqsproto.ErrReservationLost):
				lost = append(lost, r)
				s.forget(r)
			case res != nil && err == nil:
				err = res
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return lost, nil
}

// deleted settles a deleted row: its overflow payload forgotten.
func (s *Store) deleted(ctx context.Context, r jobqueue.JobRow) {
	h := s.heldOf(r)
	s.forget(r)
	if h == nil || h.pointer == "" || !s.q.Config().Overflow.DeleteAfterProcessing {
		return
	}
	if c := s.SharedCache(); c != nil {
		if err := c.Forget(ctx, h.pointer); err != nil {
			s.log.Warn().Err(err).Str("key", h.pointer).Msg("forgetting a deleted job's overflow payload failed; it stays in the cache")
		}
	}
}

// deleteOne deletes one held row's message.
func (s *Store) deleteOne(ctx context.Context, r jobqueue.JobRow) error {
	err := s.q.Delete(ctx, r.Queue, r.Reservation)
	if errors.Is(err, sqsproto.ErrReservationLost) {
		return jobqueue.ErrReservationLost
	}
	return err
}

// Release is SqsJob::release: ChangeMessageVisibility with the backoff, so
// the message comes back after delay with one more receive (the next
// attempt). On a FIFO queue its group waits for it. Vapor's jobs
// (VaporJob::release) are sent again with the attempt written in the
// payload and the received one deleted: the copy first, so a failure in
// between leaves two copies rather than none.
func (s *Store) Release(ctx context.Context, r jobqueue.JobRow, delay time.Duration) error {
	h := s.heldOf(r)
	if h == nil {
		return errUnknownRow
	}
	if h.vapor {
		return s.vaporRelease(ctx, r, h, delay)
	}
	secs := int((delay + time.Second - 1) / time.Second)
	if secs > maxVisibility {
		s.log.Warn().Dur("backoff", delay).Msg("a release's backoff exceeds SQS's 12 hours of visibility; the job comes back after 12 hours")
		secs = maxVisibility
	}
	err := s.q.ChangeVisibility(ctx, r.Queue, r.Reservation, secs)
	if errors.Is(err, sqsproto.ErrReservationLost) {
		s.forget(r)
		return jobqueue.ErrReservationLost
	}
	if err == nil {
		s.forget(r)
	}
	return err
}

// maxVisibility is SQS's longest visibility timeout: 12 hours.
const maxVisibility = 43200

// vaporRelease is VaporJob::release: the payload sent again with
// "attempts" the attempt that ran and the delay (at most SQS's 900 s),
// the received message deleted. The reservation is checked first, so a
// job another worker holds is not sent again.
func (s *Store) vaporRelease(ctx context.Context, r jobqueue.JobRow, h *held, delay time.Duration) error {
	if err := s.fence(ctx, r, h); err != nil {
		return err
	}
	if !h.pushed {
		body, err := sqsproto.SetAttempts(r.Payload, r.Attempts)
		if err != nil {
			return err
		}
		if delay > sqsproto.MaxDelay {
			s.log.Warn().Dur("backoff", delay).Msg("a Vapor job's release delay exceeds SQS's 900 s DelaySeconds; it comes back after 900 s")
			delay = sqsproto.MaxDelay
		}
		if _, err := s.q.Send(ctx, r.Queue, body, sqsproto.SendOptions{Delay: delay}); err != nil {
			return err
		}
		h.pushed = true
	}
	if err := s.deleteOne(ctx, r); err != nil && !errors.Is(err, jobqueue.ErrReservationLost) {
		return err
	}
	s.forget(r)
	return nil
}

// fence checks (once per outcome) that the row's receipt handle still
// holds the message, making it invisible for the queue's visibility
// timeout while the outcome is written in steps: a lost one is
// ErrReservationLost and nothing is written.
func (s *Store) fence(ctx context.Context, r jobqueue.JobRow, h *held) error {
	if h.fenced {
		return nil
	}
	vt, err := s.visibilityOf(ctx, r.Queue)
	if err != nil {
		return err
	}
	err = s.q.ChangeVisibility(ctx, r.Queue, r.Reservation, int(vt/time.Second))
	if errors.Is(err, sqsproto.ErrReservationLost) {
		s.forget(r)
		return jobqueue.ErrReservationLost
	}
	if err != nil {
		return err
	}
	h.fenced = true
	return nil
}

// Unreserve gives a job the worker will not run back to its queue (see
// giveBack); the claim leaves it alone while the worker lists its id in
// ClaimOptions.ExcludeIDs. The receipt handle is checked first: a
// give-back sends a copy of the job, which a job another worker holds
// must not get (it would run twice).
func (s *Store) Unreserve(ctx context.Context, r jobqueue.JobRow) error {
	h := s.heldOf(r)
	if h == nil {
		return errUnknownRow
	}
	if err := s.fence(ctx, r, h); err != nil {
		return err
	}
	id := s.giveBack(ctx, h.msg, h.vapor)
	s.mu.Lock()
	s.givenBack[r.ID] = id
	delete(s.held, r.ID)
	s.mu.Unlock()
	return nil
}

// Extend keeps running jobs invisible for their queue's visibility
// timeout from now (ChangeMessageVisibilityBatch), so that no worker, Go
// or PHP, receives a job that still runs; a row whose receipt handle SQS
// rejects is left out (lost).
func (s *Store) Extend(ctx context.Context, rows []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	byURL := map[string][]int{}
	var urls []string
	for i, r := range rows {
		if _, ok := byURL[r.Queue]; !ok {
			urls = append(urls, r.Queue)
		}
		byURL[r.Queue] = append(byURL[r.Queue], i)
	}
	var out []jobqueue.JobRow
	for _, url := range urls {
		vt, err := s.visibilityOf(ctx, url)
		if err != nil {
			return out, err
		}
		idx := byURL[url]
		receipts := make([]string, len(idx))
		for j, i := range idx {
			receipts[j] = rows[i].Reservation
		}
		results, err := s.q.ChangeVisibilityBatch(ctx, url, receipts, int(vt/time.Second))
		now := time.Now().Unix()
		for j, res := range results {
			r := rows[idx[j]]
			switch {
			case res == nil && err == nil:
				r.ReservedAt = &now
				out = append(out, r)
			case errors.Is(res, sqsproto.ErrReservationLost):
				s.forget(r)
			case res != nil && err == nil:
				// Neither refreshed nor known lost: an error says so.
				err = res
			}
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
