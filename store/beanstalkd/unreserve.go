package beanstalkd

import (
	"context"
	"errors"

	"github.com/laraworker/laraworker/internal/beanstalkproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// Giving a job back. The worker gives back a job it claimed and will not
// run (a job claimed ahead at stop, one only PHP can run), "as it was
// before the claim, attempt not counted". beanstalkd counts every reserve
// (stats-job's reserves, Laravel's attempts) and has no way to take one
// back, so a plain release would leave the job one attempt further: a
// PHP worker with --tries=1 would then fail it unrun. Instead the store
// puts a copy (same body, priority and time-to-run) in its place, brings
// the copy's reserves count to the job's count before the claim
// (reserve-job and release, parked as delayed so no reserve of another
// worker takes it meanwhile), deletes the job and makes the copy ready.
// The copy has a new id and stands at the back of its tube's priority;
// until then a crash leaves both (the job back at once, the copy after
// its park): a job runs twice rather than never.

// Unreserve gives a claimed job back, attempt not counted (see above);
// claims leave the copy in place while the worker excludes the row
// (ClaimOptions.ExcludeIDs).
func (s *Store) Unreserve(ctx context.Context, r jobqueue.JobRow) error {
	h := s.holdOf(r)
	if h == nil {
		return jobqueue.ErrReservationLost
	}
	w := s.writeOf(h)
	c := h.conn
	if c.broken() {
		var err error
		if c, err = s.reclaimOrphan(ctx, r, h, w); err != nil {
			if errors.Is(err, jobqueue.ErrReservationLost) {
				s.drop(r)
			}
			return err
		}
		if c == nil { // settled by the cleanup of an earlier try
			s.drop(r)
			return nil
		}
	}
	if err := c.lock(ctx); err != nil {
		return err
	}
	copyID, err := s.replaceWithCopy(c, r, h, w)
	c.unlock()
	if err != nil {
		if errors.Is(err, jobqueue.ErrReservationLost) {
			s.drop(r)
		}
		return err
	}
	s.mu.Lock()
	s.givenBack[r.ID] = copyID
	s.mu.Unlock()
	s.drop(r)
	return nil
}

// replaceWithCopy puts the copy, brings its reserves count to the job's
// before the claim, deletes the job and readies the copy (the caller
// holds c, which has the job reserved).
func (s *Store) replaceWithCopy(c *conn, r jobqueue.JobRow, h *hold, w *write) (uint64, error) {
	park := max(h.ttr, 1)
	if w.copyID == 0 {
		if err := c.use(r.Queue); err != nil {
			return 0, err
		}
		id, err := c.c.Put(h.pri, park, h.ttr, r.Payload)
		if err != nil {
			return 0, err
		}
		w.copyID = id
		cmds := make([]beanstalkproto.Cmd, 0, 2*(h.reserves-1))
		for range h.reserves - 1 {
			cmds = append(cmds, beanstalkproto.ReserveJobCmd(id), beanstalkproto.ReleaseCmd(id, h.pri, park))
		}
		if err := allOK(c, cmds, "RESERVED", "RELEASED"); err != nil {
			return 0, err
		}
	}
	replies, err := c.c.Do(beanstalkproto.DeleteCmd(uint64(r.ID)))
	if err != nil {
		return 0, err
	}
	if err := replies[0].Err("delete", "DELETED"); err != nil {
		if !errors.Is(err, beanstalkproto.ErrNotFound) {
			return 0, err
		}
		// Another worker has the job: the copy must not run.
		if err := allOK(c, []beanstalkproto.Cmd{beanstalkproto.DeleteCmd(w.copyID)}, "DELETED"); err != nil {
			s.log.Error().Err(err).Int64("id", r.ID).Uint64("copy_id", w.copyID).
				Msg("a job given back turned out another worker's, and its copy could not be deleted: it may run twice")
		}
		return 0, jobqueue.ErrReservationLost
	}
	w.copyReady = true
	if err := allOK(c, []beanstalkproto.Cmd{beanstalkproto.KickJobCmd(w.copyID)}, "KICKED"); err != nil {
		return 0, err
	}
	return w.copyID, nil
}

// reclaimOrphan makes a job whose connection broke reserved again, by the
// admin connection, for replaceWithCopy (nil, nil: an earlier try had
// replaced it already and is finished here). A half-made copy of an
// earlier try is deleted first.
func (s *Store) reclaimOrphan(ctx context.Context, r jobqueue.JobRow, h *hold, w *write) (*conn, error) {
	c, err := s.pool.adminConn(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.lock(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	if w.copyReady {
		// The job is gone; the copy may still be parked.
		err := allOK(c, []beanstalkproto.Cmd{beanstalkproto.KickJobCmd(w.copyID)}, "KICKED")
		if errors.Is(err, beanstalkproto.ErrNotFound) {
			err = nil // made ready already (kick landed, or its park ran out)
		}
		return nil, err
	}
	if w.copyID != 0 {
		if err := allOK(c, []beanstalkproto.Cmd{beanstalkproto.DeleteCmd(w.copyID)}, "DELETED"); err != nil && !errors.Is(err, beanstalkproto.ErrNotFound) {
			return nil, err
		}
		w.copyID = 0
	}
	replies, err := c.c.Do(beanstalkproto.StatsJobCmd(uint64(r.ID)), beanstalkproto.ReserveJobCmd(uint64(r.ID)), beanstalkproto.StatsJobCmd(uint64(r.ID)))
	if err != nil {
		return nil, err
	}
	if replies[1].Err("reserve-job", "RESERVED") != nil {
		return nil, jobqueue.ErrReservationLost
	}
	before, err1 := beanstalkproto.ParseJobStats(replies[0].Data)
	after, err2 := beanstalkproto.ParseJobStats(replies[2].Data)
	if err1 != nil || err2 != nil || before.State == "reserved" || before.Reserves != h.reserves || string(replies[1].Data) != string(r.Payload) {
		s.putBack(c, uint64(r.ID), before, after)
		return nil, jobqueue.ErrReservationLost
	}
	return c, nil
}

// allOK runs cmds on c (held by the caller), each answering one of want.
func allOK(c *conn, cmds []beanstalkproto.Cmd, want ...string) error {
	if len(cmds) == 0 {
		return nil
	}
	replies, err := c.c.Do(cmds...)
	if err != nil {
		return err
	}
	for i, r := range replies {
		if err := r.Err(cmds[i].Line, want...); err != nil {
			return err
		}
	}
	return nil
}
