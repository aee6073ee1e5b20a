package beanstalkd

import (
	"context"
	"errors"
	"time"

	"github.com/laraworker/laraworker/internal/beanstalkproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// Outcomes are written through the connection that reserved the job
// (beanstalkd refuses any other): delete, release and touch answer
// NOT_FOUND once the reservation is gone (its time-to-run ran out, or
// another worker has the job), which is ErrReservationLost. The store's
// own fence (hold) refuses a write about a reservation it no longer
// holds without asking. Writes about a job whose connection broke take
// the orphan paths (orphan.go).

// write is what the store knows of an outcome written in steps (Fail,
// Finish, Unreserve) or retried after an error: the worker retries with
// the same row, and the next try goes on from here.
type write struct {
	// touched: the reservation was renewed for the outcome's writes.
	touched bool
	// gone: the job is deleted from beanstalkd by this write.
	gone bool
	// fw is the failed_jobs row Fail wrote (or meant to) and its hook job.
	fw jobqueue.FailedWrite
	// batchUnsure: a try of the batch update failed; it may have landed.
	batchUnsure bool
	// nextID is the chain link Finish pushed (0: none yet).
	nextID uint64
	// copyID is the job Unreserve put in the reservation's place, and
	// copyReady says it stands for the job now (the original is gone).
	copyID    uint64
	copyReady bool
}

// writeOf is the hold's write under way, started when there is none.
func (s *Store) writeOf(h *hold) *write {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.w == nil {
		h.w = &write{}
	}
	return h.w
}

// brokenErr reports whether err broke the connection (the exchange's
// outcome unknown); other errors (ctx while waiting for the connection)
// sent nothing.
func brokenErr(err error) bool { return errors.Is(err, beanstalkproto.ErrBroken) }

// Delete deletes finished jobs, pipelined per connection, and returns
// those whose reservation was lost. On an error the jobs deleted before
// it stay known as deleted: the worker's retry finds them done.
func (s *Store) Delete(ctx context.Context, rows []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	var lost []jobqueue.JobRow
	byConn := map[*conn][]jobqueue.JobRow{}
	var order []*conn
	for _, r := range rows {
		h := s.holdOf(r)
		switch {
		case h == nil:
			lost = append(lost, r)
		case h.conn.broken() || s.writeOf(h).gone:
			gone, err := s.deleteHeld(ctx, r, h)
			if err != nil {
				return nil, err
			}
			if !gone {
				lost = append(lost, r)
			}
		default:
			if _, ok := byConn[h.conn]; !ok {
				order = append(order, h.conn)
			}
			byConn[h.conn] = append(byConn[h.conn], r)
		}
	}
	for _, c := range order {
		l, err := s.deleteAll(ctx, c, byConn[c])
		if err != nil {
			return nil, err
		}
		lost = append(lost, l...)
	}
	for _, r := range rows {
		s.drop(r)
	}
	return lost, nil
}

// deleteAll deletes rows, all reserved through c, in one exchange.
func (s *Store) deleteAll(ctx context.Context, c *conn, rows []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	cmds := make([]beanstalkproto.Cmd, len(rows))
	for i, r := range rows {
		cmds[i] = beanstalkproto.DeleteCmd(uint64(r.ID))
	}
	replies, err := c.do(ctx, cmds...)
	if err != nil {
		if brokenErr(err) {
			for _, r := range rows {
				if h := s.holdOf(r); h != nil {
					s.markUnsure(h)
				}
			}
		}
		return nil, err
	}
	var lost []jobqueue.JobRow
	for i, r := range rows {
		h := s.holdOf(r)
		switch err := replies[i].Err(cmds[i].Line, "DELETED"); {
		case err == nil:
			if h != nil {
				s.writeOf(h).gone = true
			}
		case errors.Is(err, beanstalkproto.ErrNotFound):
			lost = append(lost, r)
		default:
			return nil, err
		}
	}
	return lost, nil
}

// deleteHeld deletes the held job r: gone is false when its reservation
// was lost (nothing deleted). A job already deleted by an earlier try of
// this outcome counts as gone.
func (s *Store) deleteHeld(ctx context.Context, r jobqueue.JobRow, h *hold) (gone bool, err error) {
	w := s.writeOf(h)
	if w.gone {
		return true, nil
	}
	if h.conn.broken() {
		gone, err = s.deleteOrphan(ctx, r, h)
	} else {
		gone, err = s.exchange(ctx, h, beanstalkproto.DeleteCmd(uint64(r.ID)), "DELETED")
	}
	if gone {
		w.gone = true
	}
	return gone, err
}

// exchange runs a one-job write on the job's connection: done is false
// when the answer is NOT_FOUND (the reservation was lost) unless an
// earlier try of this write may have landed.
func (s *Store) exchange(ctx context.Context, h *hold, cmd beanstalkproto.Cmd, want string) (done bool, err error) {
	replies, err := h.conn.do(ctx, cmd)
	if err != nil {
		if brokenErr(err) {
			s.markUnsure(h)
		}
		return false, err
	}
	err = replies[0].Err(cmd.Line, want)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, beanstalkproto.ErrNotFound):
		return s.isUnsure(h), nil
	}
	return false, err
}

// Release is BeanstalkdJob::release: the job back to ready after delay
// (whole seconds, rounded up), at Laravel's priority 1024; its attempt
// stays counted.
func (s *Store) Release(ctx context.Context, r jobqueue.JobRow, delay time.Duration) error {
	h := s.holdOf(r)
	if h == nil {
		return jobqueue.ErrReservationLost
	}
	var done bool
	var err error
	if h.conn.broken() {
		done, err = s.releaseOrphan(ctx, r, h)
	} else {
		done, err = s.exchange(ctx, h, beanstalkproto.ReleaseCmd(uint64(r.ID), beanstalkproto.DefaultPriority, beanstalkproto.Seconds(delay)), "RELEASED")
	}
	if err != nil {
		return err
	}
	s.drop(r)
	if !done {
		return jobqueue.ErrReservationLost
	}
	return nil
}

// Extend touches running jobs (their whole time-to-run again), pipelined
// per connection, and returns those it renewed with ReservedAt now. A job
// whose connection broke is left out: the server gave it back.
func (s *Store) Extend(ctx context.Context, rows []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	byConn := map[*conn][]jobqueue.JobRow{}
	var order []*conn
	for _, r := range rows {
		h := s.holdOf(r)
		if h == nil || h.conn.broken() {
			s.drop(r)
			continue
		}
		if _, ok := byConn[h.conn]; !ok {
			order = append(order, h.conn)
		}
		byConn[h.conn] = append(byConn[h.conn], r)
	}
	var out []jobqueue.JobRow
	for _, c := range order {
		touched, err := s.touchAll(ctx, c, byConn[c])
		out = append(out, touched...)
		if err != nil && !brokenErr(err) {
			return out, err
		}
	}
	return out, nil
}

// touchAll touches rows, all reserved through c.
func (s *Store) touchAll(ctx context.Context, c *conn, rows []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	cmds := make([]beanstalkproto.Cmd, len(rows))
	for i, r := range rows {
		cmds[i] = beanstalkproto.TouchCmd(uint64(r.ID))
	}
	replies, err := c.do(ctx, cmds...)
	if err != nil {
		if brokenErr(err) {
			for _, r := range rows {
				s.drop(r)
			}
		}
		return nil, err
	}
	now := s.now().Unix()
	var out []jobqueue.JobRow
	for i, r := range rows {
		switch err := replies[i].Err(cmds[i].Line, "TOUCHED"); {
		case err == nil:
			r.ReservedAt = &now
			out = append(out, r)
		case errors.Is(err, beanstalkproto.ErrNotFound):
			s.drop(r)
		default:
			return out, err
		}
	}
	return out, nil
}

// touch renews one reservation before an outcome written in steps, once:
// its writes then have the whole time-to-run. A lost reservation is
// ErrReservationLost. A job whose connection broke is checked to still
// be the job this store reserved, back to ready and not reserved since.
func (s *Store) touch(ctx context.Context, r jobqueue.JobRow, h *hold, w *write) error {
	if w.touched {
		return nil
	}
	var ok bool
	var err error
	if h.conn.broken() {
		var st beanstalkproto.JobStats
		st, ok, err = s.orphanState(ctx, r, h)
		ok = ok && st.State != "reserved"
	} else {
		ok, err = s.exchange(ctx, h, beanstalkproto.TouchCmd(uint64(r.ID)), "TOUCHED")
	}
	if err != nil {
		return err
	}
	if !ok {
		return jobqueue.ErrReservationLost
	}
	w.touched = true
	return nil
}

// Finish removes a finished job with its followup: the chain's next link
// pushed first (Laravel pushes it from inside the job, before the delete),
// taken back when the delete finds the reservation lost; then the batch's
// success in the database, with the batch callbacks job it triggers.
func (s *Store) Finish(ctx context.Context, r jobqueue.JobRow, f jobqueue.Followup) error {
	if err := s.checkHooks(f); err != nil {
		return err
	}
	h := s.holdOf(r)
	if h == nil {
		return jobqueue.ErrReservationLost
	}
	w := s.writeOf(h)
	if !w.gone {
		if err := s.finishInBeanstalkd(ctx, r, h, w, f.Next); err != nil {
			if errors.Is(err, jobqueue.ErrReservationLost) {
				s.drop(r)
			}
			return err
		}
	}
	if f.Batch != nil {
		if err := s.batchSuccess(ctx, w, f.Batch, f.Hooks); err != nil {
			return err
		}
	}
	s.drop(r)
	return nil
}

// finishInBeanstalkd pushes the next link and deletes the job.
func (s *Store) finishInBeanstalkd(ctx context.Context, r jobqueue.JobRow, h *hold, w *write, next *jobqueue.PushItem) error {
	if next != nil && w.nextID == 0 {
		if err := s.touch(ctx, r, h, w); err != nil {
			return err
		}
		id, err := s.PushID(ctx, *next)
		if err != nil {
			return err
		}
		w.nextID = id
	}
	gone, err := s.deleteHeld(ctx, r, h)
	if err != nil {
		return err
	}
	if !gone {
		if w.nextID != 0 {
			s.withdraw(ctx, r, w.nextID)
		}
		return jobqueue.ErrReservationLost
	}
	return nil
}

// withdraw deletes a chain link pushed for a job whose reservation turned
// out lost, unless a worker has it already.
func (s *Store) withdraw(ctx context.Context, r jobqueue.JobRow, id uint64) {
	c, err := s.pool.adminConn(ctx)
	if err == nil {
		var replies []beanstalkproto.Reply
		if replies, err = c.do(ctx, beanstalkproto.DeleteCmd(id)); err == nil {
			err = replies[0].Err("delete", "DELETED")
		}
	}
	if err != nil {
		s.log.Error().Err(err).Int64("id", r.ID).Uint64("next_id", id).
			Msg("the job's reservation was lost after its chain's next link was pushed, and the link could not be taken back: it runs for a job another worker runs too")
	}
}

// Fail moves a job to failed_jobs: its reservation renewed (a lost one
// writes nothing), the failed row written (with the failure's hook job,
// parked, f.Hooks), the job deleted (the row, and the parked hook job,
// deleted again when that finds the reservation lost), then its batch's
// failure recorded. Laravel deletes first and writes the row after, so a
// crash between loses the job; here a crash between runs it again.
func (s *Store) Fail(ctx context.Context, r jobqueue.JobRow, uuid, exception string, f jobqueue.Followup) error {
	if uuid == "" {
		return jobqueue.ErrNoUUID
	}
	if err := s.checkHooks(f); err != nil {
		return err
	}
	h := s.holdOf(r)
	if h == nil {
		return jobqueue.ErrReservationLost
	}
	w := s.writeOf(h)
	if !w.gone {
		if err := s.failInBeanstalkd(ctx, r, h, w, uuid, exception, f.Hooks); err != nil {
			if errors.Is(err, jobqueue.ErrReservationLost) {
				s.drop(r)
			}
			return err
		}
	}
	if err := s.settleFailure(ctx, w, f); err != nil {
		return err
	}
	s.drop(r)
	return nil
}

// failInBeanstalkd is Fail up to the job's delete.
func (s *Store) failInBeanstalkd(ctx context.Context, r jobqueue.JobRow, h *hold, w *write, uuid, exception string, hooks *jobqueue.Hooks) error {
	if err := s.touch(ctx, r, h, w); err != nil {
		return err
	}
	if err := w.fw.Record(ctx, s.db, r, uuid, exception, hooks, s.RetryAfter()); err != nil {
		return err
	}
	gone, err := s.deleteHeld(ctx, r, h)
	if err != nil {
		return err
	}
	if !gone {
		// Another worker has the job: the failure is not this worker's.
		if err := s.forgetFailure(ctx, w); err != nil {
			return err
		}
		return jobqueue.ErrReservationLost
	}
	return nil
}

// checkHooks refuses hook jobs on a store opened without a hooks queue.
func (s *Store) checkHooks(f jobqueue.Followup) error {
	if f.Hooks == nil {
		return nil
	}
	if _, _, ok := s.db.HooksQueue(); !ok {
		return errNoHooksQueue
	}
	return nil
}

var errNoHooksQueue = errors.New("beanstalkd: the outcome has hook jobs but the store's database was opened without a hooks queue (database.Options.HooksQueue)")
