package redis

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// write is what the store knows of an outcome under way: one whose
// earlier try failed (and may have landed), or one written in steps
// (Fail, Finish). The worker retries a failed write with the same row,
// and the next try goes on from here.
type write struct {
	// until is the reservation's score as last known (pop, Extend).
	until int64
	// unsure: a try of the Redis write failed without an answer; it may
	// have landed.
	unsure bool
	// extended: Fail's Extend (or Finish's, across slots) is done.
	extended bool
	// redisDone: the job is gone from Redis by this write.
	redisDone bool
	// fw is the failed_jobs row Fail wrote (or meant to) and its hook job.
	fw jobqueue.FailedWrite
	// batchUnsure: a try of the batch update failed; it may have landed.
	batchUnsure bool
	// horizonDone: Horizon's records of the outcome were written (or
	// tried: they are not retried).
	horizonDone bool
	// next is the chain link's payload as pushed (prepared once, so every
	// try pushes the same bytes); pushed/pushUnsure track the push of a
	// link that goes to another cluster slot.
	next       []byte
	pushed     bool
	pushUnsure bool
}

// heldMargin is how long before its score a reservation counts as still
// held for sure: pops move a member back once its score is due by their
// clock, which may run ahead of this one by a little.
const heldMargin = 2

// writeKey names the write of one claim of a job: its reservation and
// the row's number. The reservation alone is not enough: a payload pushed
// twice is reserved under the same member by two claims (one after the
// other), and the second claim's outcome must not take the first's write
// for an earlier try of its own (it would skip the failed_jobs row the
// first wrote).
func writeKey(r jobqueue.JobRow) string {
	return strconv.FormatInt(r.ID, 10) + "\x00" + r.Reservation
}

// begin returns the write under way for row, starting one.
func (s *Store) begin(r jobqueue.JobRow) *write {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.writes[writeKey(r)]
	if !ok {
		w = &write{until: s.reservedUntil(r)}
		s.writes[writeKey(r)] = w
	}
	return w
}

// peek returns the write under way for row, if any.
func (s *Store) peek(r jobqueue.JobRow) *write {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[writeKey(r)]
}

// end forgets the write of row: written, or lost.
func (s *Store) end(r jobqueue.JobRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.writes, writeKey(r))
}

// endAll forgets the writes of rows, taking the lock once: with no write
// under way (the usual case) it costs nothing per row.
func (s *Store) endAll(rows []jobqueue.JobRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.writes) == 0 {
		return
	}
	for _, r := range rows {
		delete(s.writes, writeKey(r))
	}
}

// markUnsure records that a write about rows failed without an answer.
func (s *Store) markUnsure(rows ...jobqueue.JobRow) {
	for _, r := range rows {
		w := s.begin(r)
		s.mu.Lock()
		w.unsure = true
		s.mu.Unlock()
	}
}

// ownEarlierWrite reports whether the member of row, found gone, was
// taken by this store's own earlier try: a try failed without an answer,
// and the reservation was still valid (no pop can have moved it back;
// only queue:clear could have removed it otherwise). Clocks must agree.
func (s *Store) ownEarlierWrite(r jobqueue.JobRow) bool {
	w := s.peek(r)
	if w == nil {
		return false
	}
	s.mu.Lock()
	unsure, until := w.unsure, w.until
	s.mu.Unlock()
	return unsure && (s.q.Config().NeverExpire || s.q.Now().Unix()+heldMargin < until)
}

// Delete removes finished jobs (ZREM of their members) and returns those
// whose reservation was lost.
func (s *Store) Delete(ctx context.Context, rows []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	jobs := make([]redisproto.Job, len(rows))
	ptrs := make([]*redisproto.Job, len(rows))
	for i, r := range rows {
		jobs[i] = redisproto.Job{Queue: r.Queue, Payload: r.Payload, Reserved: r.Reservation, Attempts: r.Attempts}
		ptrs[i] = &jobs[i]
	}
	lostJobs, err := s.q.Delete(ctx, ptrs...)
	if err != nil {
		s.markUnsure(rows...)
		return nil, err
	}
	var lost []jobqueue.JobRow
	var isLost map[int]bool
	for _, j := range lostJobs {
		// j is one of jobs: its index is its offset in the array.
		i := indexOf(jobs, j)
		r := rows[i]
		if !s.ownEarlierWrite(r) {
			lost = append(lost, r)
			if isLost == nil {
				isLost = map[int]bool{}
			}
			isLost[i] = true
		}
	}
	s.endAll(rows)
	if s.horizon != nil {
		done := make([]jobqueue.JobRow, 0, len(rows)-len(lost))
		for i, r := range rows {
			if !isLost[i] {
				done = append(done, r)
			}
		}
		s.horizonCompleted(ctx, done)
		s.horizonLost(lost...)
	}
	return lost, nil
}

// indexOf is the index of j in jobs, of which it is an element.
func indexOf(jobs []redisproto.Job, j *redisproto.Job) int {
	for i := range jobs {
		if &jobs[i] == j {
			return i
		}
	}
	panic("redisstore: a lost job that is not one of the batch")
}

// Release is RedisQueue's deleteAndRelease, fenced: the member moves to
// the delayed set, ready at now + delay.
func (s *Store) Release(ctx context.Context, r jobqueue.JobRow, delay time.Duration) error {
	err := s.single(r, s.q.Release(ctx, job(r), delay))
	s.horizonOutcome(r, err, func() error { return s.horizon.Released(context.WithoutCancel(ctx), horizonJob(r)) }, "released")
	return err
}

// Unreserve gives a popped job back untouched, at the head of its list;
// the claim leaves it there (see ClaimOptions.ExcludeIDs) so that another
// worker takes it.
func (s *Store) Unreserve(ctx context.Context, r jobqueue.JobRow) error {
	// Remembered first: a claim running as the job lands back at the head
	// must already leave it there.
	s.giveBack(r)
	lost, err := s.q.Unreserve(ctx, job(r))
	if err == nil && len(lost) > 0 {
		err = redisproto.ErrReservationLost
	}
	err = s.single(r, err)
	s.horizonOutcome(r, err, func() error {
		return s.horizon.Unreserved(context.WithoutCancel(ctx), horizonJob(r), string(r.Payload))
	}, "unreserved")
	return err
}

// single settles the answer of a one-job write: lost stays lost unless
// it was this store's own earlier try; another error may have landed.
func (s *Store) single(r jobqueue.JobRow, err error) error {
	switch {
	case err == nil:
	case errors.Is(err, jobqueue.ErrReservationLost):
		if !s.ownEarlierWrite(r) {
			s.end(r)
			return err
		}
	default:
		s.markUnsure(r)
		return err
	}
	s.end(r)
	return nil
}

// Extend moves running jobs' reservations to now + retry_after and
// returns those it refreshed with ReservedAt now.
func (s *Store) Extend(ctx context.Context, rows []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	jobs := make([]*redisproto.Job, len(rows))
	for i, r := range rows {
		jobs[i] = job(r)
	}
	byMember := make(map[string]int, len(rows))
	for i, r := range rows {
		byMember[r.Queue+"\x00"+r.Reservation] = i
	}
	refreshed, err := s.q.Extend(ctx, jobs...)
	out := make([]jobqueue.JobRow, 0, len(refreshed))
	for _, j := range refreshed {
		r := rows[byMember[j.Queue+"\x00"+j.Reserved]]
		at := j.ReservedUntil - s.retry
		r.ReservedAt = &at
		out = append(out, r)
		s.mu.Lock()
		if w, ok := s.writes[writeKey(r)]; ok {
			w.until = max(w.until, j.ReservedUntil)
		}
		s.mu.Unlock()
	}
	return out, err
}

// Finish removes a finished job with its followup: the chain's next link
// in the same script, then the batch's success in the database, with the
// batch callbacks job it triggers (f.Hooks) in the same transaction.
func (s *Store) Finish(ctx context.Context, r jobqueue.JobRow, f jobqueue.Followup) error {
	if f.Hooks != nil {
		if _, _, ok := s.db.HooksQueue(); !ok {
			return errNoHooksQueue
		}
	}
	w := s.begin(r)
	if !w.redisDone {
		if err := s.finishInRedis(ctx, r, w, f.Next); err != nil {
			if errors.Is(err, jobqueue.ErrReservationLost) {
				s.end(r)
				s.horizonLost(r)
			}
			return err
		}
	}
	if !w.horizonDone {
		w.horizonDone = true
		// Laravel pushes the link from inside the job, before its delete.
		if f.Next != nil {
			s.horizonPushed(ctx, f.Next.Queue, w.next)
		}
		s.horizonCompleted(ctx, []jobqueue.JobRow{r})
	}
	if f.Batch != nil {
		if err := s.batchSuccess(ctx, w, f.Batch, f.Hooks); err != nil {
			return err
		}
	}
	s.end(r)
	return nil
}

// finishInRedis deletes the job and pushes its next link, all or nothing
// when they share a slot.
func (s *Store) finishInRedis(ctx context.Context, r jobqueue.JobRow, w *write, next *jobqueue.PushItem) error {
	var items []jobqueue.PushItem
	if next != nil {
		if w.next == nil {
			prepared, _, err := redisproto.PreparePayload(next.Payload)
			if err == nil {
				prepared, err = s.horizonDispatch(prepared)
			}
			if err != nil {
				return err
			}
			w.next = prepared
		}
		items = []jobqueue.PushItem{{Queue: next.Queue, Payload: w.next, Delay: next.Delay}}
	}
	err := s.q.Complete(ctx, job(r), items...)
	if errors.Is(err, redisproto.ErrCrossSlot) {
		err = s.finishAcrossSlots(ctx, r, w, items[0])
	}
	switch {
	case err == nil:
	case errors.Is(err, jobqueue.ErrReservationLost):
		if !s.ownEarlierWrite(r) {
			return err
		}
	default:
		s.markUnsure(r)
		return err
	}
	w.redisDone = true
	return nil
}

// finishAcrossSlots is Laravel's order for a link no script can push with
// the delete (another cluster slot): the reservation is extended (a lost
// one writes nothing), the link pushed, the job deleted; when the delete
// finds the reservation lost after all, the link is taken back if no pop
// has taken it yet.
func (s *Store) finishAcrossSlots(ctx context.Context, r jobqueue.JobRow, w *write, next jobqueue.PushItem) error {
	if !w.pushed {
		if err := s.extendFor(ctx, r, w); err != nil {
			return err
		}
		if w.pushUnsure {
			// The earlier push may have landed: take that copy back first.
			if _, err := s.q.Withdraw(ctx, next.Queue, next.Payload); err != nil {
				return err
			}
		}
		var err error
		if next.Delay > 0 {
			_, err = s.q.Later(ctx, next.Queue, next.Payload, next.Delay)
		} else {
			_, err = s.q.Push(ctx, next.Queue, next.Payload)
		}
		if err != nil {
			w.pushUnsure = true
			return err
		}
		w.pushed = true
	}
	lost, err := s.q.Delete(ctx, job(r))
	if err != nil {
		return err
	}
	if len(lost) > 0 && !s.ownEarlierWrite(r) {
		taken, werr := s.q.Withdraw(ctx, next.Queue, next.Payload)
		if werr != nil {
			return werr
		}
		if !taken {
			s.log.Error().Str("queue", r.Queue).Str("next_queue", next.Queue).
				Msg("the job's reservation was lost after its chain's next link was pushed to another cluster slot, and a worker took the link already: the link runs for a job another worker runs too (give the chain's queues one hash tag to make this atomic)")
		}
		return redisproto.ErrReservationLost
	}
	return nil
}

// extendFor refreshes the reservation of a job whose outcome is written
// in steps, once, so that it holds for retry_after meanwhile; a lost one
// is ErrReservationLost.
func (s *Store) extendFor(ctx context.Context, r jobqueue.JobRow, w *write) error {
	if w.extended {
		return nil
	}
	refreshed, err := s.q.Extend(ctx, job(r))
	if err != nil {
		return err
	}
	if len(refreshed) == 0 {
		return redisproto.ErrReservationLost
	}
	s.mu.Lock()
	w.until, w.extended = max(w.until, refreshed[0].ReservedUntil), true
	s.mu.Unlock()
	return nil
}

// Fail moves a job to failed_jobs: its reservation extended (a lost one
// writes nothing), the failed row written (with the failure's hook job,
// parked, f.Hooks), the job deleted from Redis (the row, and the parked
// hook job, deleted again when that finds the reservation lost), then its
// batch's failure recorded (and the hook job unparked with the batch
// callbacks that update triggered, in the same transaction).
func (s *Store) Fail(ctx context.Context, r jobqueue.JobRow, uuid, exception string, f jobqueue.Followup) error {
	if uuid == "" {
		return jobqueue.ErrNoUUID
	}
	if f.Hooks != nil {
		if _, _, ok := s.db.HooksQueue(); !ok {
			return errNoHooksQueue
		}
	}
	w := s.begin(r)
	if !w.redisDone {
		if err := s.failInRedis(ctx, r, w, uuid, exception, f.Hooks); err != nil {
			if errors.Is(err, jobqueue.ErrReservationLost) {
				s.end(r)
				s.horizonLost(r)
			}
			return err
		}
	}
	if !w.horizonDone && s.horizon != nil {
		w.horizonDone = true
		s.horizonFailed("failed", s.horizon.Failed(context.WithoutCancel(ctx), horizonJob(r), exception))
	}
	if err := s.settleFailure(ctx, w, f); err != nil {
		return err
	}
	s.end(r)
	return nil
}

// errNoHooksQueue refuses hook jobs on a store opened without a hooks
// queue.
var errNoHooksQueue = errors.New("redisstore: the outcome has hook jobs but the store's database was opened without a hooks queue (dbqueue.Options.HooksQueue)")

// settleFailure is a failure's last write, once the job is gone from
// Redis: its batch's failure and, with hooks, the hook job unparked.
func (s *Store) settleFailure(ctx context.Context, w *write, f jobqueue.Followup) error {
	if f.Hooks == nil {
		if f.Batch == nil {
			return nil
		}
		return s.batchFailure(ctx, w, f.Batch)
	}
	if w.batchUnsure && f.Batch != nil {
		done, err := s.failureCounted(ctx, f.Batch)
		if err != nil || done {
			return err
		}
	}
	err := s.db.SettleFailureHook(ctx, w.fw.HookID, f.Batch, f.Hooks)
	return s.batchDone(w, err)
}

// failInRedis is Fail up to the delete from Redis.
func (s *Store) failInRedis(ctx context.Context, r jobqueue.JobRow, w *write, uuid, exception string, hooks *jobqueue.Hooks) error {
	if err := s.extendFor(ctx, r, w); err != nil {
		return err
	}
	if err := w.fw.Record(ctx, s.db, r, uuid, exception, hooks, s.RetryAfter()); err != nil {
		return err
	}
	if s.testAfterFailedRow != nil {
		s.testAfterFailedRow()
	}
	lost, err := s.q.Delete(ctx, job(r))
	if err != nil {
		s.markUnsure(r)
		return err
	}
	if len(lost) > 0 && !s.ownEarlierWrite(r) {
		// Another worker has the job (or queue:clear removed it): the
		// failure is not this worker's to record.
		if err := s.forgetFailure(ctx, w); err != nil {
			return err
		}
		return redisproto.ErrReservationLost
	}
	w.redisDone = true
	return nil
}

// forgetFailure deletes the failed row written for a job another worker
// holds, with its parked hook job.
func (s *Store) forgetFailure(ctx context.Context, w *write) error {
	if w.fw.Hook == nil {
		_, err := s.db.Forget(ctx, w.fw.UUID)
		return err
	}
	parked, err := s.db.ForgetFailedWithHook(ctx, w.fw.UUID, w.fw.HookID)
	if err == nil && !parked {
		s.log.Error().Str("failed_uuid", w.fw.UUID).Str("hook_uuid", w.fw.HookUUID).
			Msg("the job's reservation turned out lost after its failure was recorded, and its hook job (RunFailureHooks) was no longer parked: its failure hooks may run in PHP for a job another worker holds")
	}
	return err
}

// batchSuccess records a finished job in its batch, with the batch
// callbacks job the update triggers (hooks); a batch that no longer
// exists has nothing to count. A retry after a try whose answer was lost
// may count it twice (the commit is not told apart), and push its batch
// callbacks job twice: logged.
func (s *Store) batchSuccess(ctx context.Context, w *write, b *jobqueue.BatchEntry, hooks *jobqueue.Hooks) error {
	if w.batchUnsure {
		s.log.Warn().Str("batch", b.ID).Str("uuid", b.JobUUID).
			Msg("recording a batch success again after a try whose answer was lost: if that try committed, the batch counts this job twice (and its callbacks may run twice)")
	}
	var err error
	if hooks != nil {
		err = s.db.RecordBatchSuccessWithHooks(ctx, b.ID, b.JobUUID, hooks)
	} else {
		_, err = s.db.RecordBatchSuccess(ctx, b.ID, b.JobUUID)
	}
	return s.batchDone(w, err)
}

// batchFailure records a failed job in its batch. A retry after a try
// whose answer was lost finds the job's uuid among the batch's failed
// ids when that try committed.
func (s *Store) batchFailure(ctx context.Context, w *write, b *jobqueue.BatchEntry) error {
	if w.batchUnsure {
		done, err := s.failureCounted(ctx, b)
		if err != nil || done {
			return err
		}
	}
	_, err := s.db.RecordBatchFailure(ctx, b.ID, b.JobUUID, b.AllowFailures)
	return s.batchDone(w, err)
}

// failureCounted reports whether the batch counts the job's failure
// already (or is gone): an earlier try whose answer was lost committed.
func (s *Store) failureCounted(ctx context.Context, b *jobqueue.BatchEntry) (bool, error) {
	batch, err := s.db.FindBatch(ctx, b.ID)
	if errors.Is(err, jobqueue.ErrBatchNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return slices.Contains(batch.FailedJobIDs, b.JobUUID), nil
}

func (s *Store) batchDone(w *write, err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrBatchNotFound) {
		return nil
	}
	w.batchUnsure = true
	return err
}
