package beanstalkd

import (
	"bytes"
	"context"
	"errors"
	"strconv"

	"github.com/laraworker/laraworker/internal/beanstalkproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// A job whose connection broke is no longer reserved by anyone: the
// server put it back to ready when the connection closed (its attempt
// counted), unless an earlier try of the write landed before the break.
// Its outcome can still be written from another connection while it is
// the same job (same id, same bytes: after a server restart without a
// binlog ids start again at 1) and no worker has reserved it since (its
// reserves count is still this store's): a finished job deleted, not run
// again; a released one left ready. Otherwise its reservation is lost.

// orphanState reads the job r (id, body) from the admin connection: ok
// is false when it is gone, another job, or reserved since this store's
// reservation.
func (s *Store) orphanState(ctx context.Context, r jobqueue.JobRow, h *hold) (beanstalkproto.JobStats, bool, error) {
	c, err := s.pool.adminConn(ctx)
	if err != nil {
		return beanstalkproto.JobStats{}, false, err
	}
	id := uint64(r.ID)
	replies, err := c.do(ctx, beanstalkproto.StatsJobCmd(id), beanstalkproto.Cmd{Line: "peek " + strconv.FormatUint(id, 10)})
	if err != nil {
		return beanstalkproto.JobStats{}, false, err
	}
	if err := replies[0].Err("stats-job", "OK"); err != nil {
		if errors.Is(err, beanstalkproto.ErrNotFound) {
			return beanstalkproto.JobStats{}, false, nil
		}
		return beanstalkproto.JobStats{}, false, err
	}
	st, err := beanstalkproto.ParseJobStats(replies[0].Data)
	if err != nil {
		return st, false, err
	}
	same := replies[1].Err("peek", "FOUND") == nil && bytes.Equal(replies[1].Data, r.Payload) && st.Reserves == h.reserves
	return st, same, nil
}

// deleteOrphan deletes the job r, finished, whose connection broke.
func (s *Store) deleteOrphan(ctx context.Context, r jobqueue.JobRow, h *hold) (bool, error) {
	st, same, err := s.orphanState(ctx, r, h)
	if err != nil {
		return false, err
	}
	if st.ID == 0 {
		// Gone: the earlier try's delete landed, or another worker ran it.
		return s.isUnsure(h), nil
	}
	if !same || st.State == "reserved" {
		return false, nil
	}
	c, err := s.pool.adminConn(ctx)
	if err != nil {
		return false, err
	}
	replies, err := c.do(ctx, beanstalkproto.DeleteCmd(uint64(r.ID)))
	if err != nil {
		return false, err
	}
	switch err := replies[0].Err("delete", "DELETED"); {
	case err == nil:
		return true, nil
	case errors.Is(err, beanstalkproto.ErrNotFound):
		return false, nil // reserved by another worker meanwhile
	default:
		return false, err
	}
}

// releaseOrphan settles a release of the job r whose connection broke:
// the server has put it back already (or the earlier try did), so it is
// done while the job is still this store's and not reserved; the delay
// asked for is then lost when the server's put-back came first.
func (s *Store) releaseOrphan(ctx context.Context, r jobqueue.JobRow, h *hold) (bool, error) {
	st, same, err := s.orphanState(ctx, r, h)
	if err != nil {
		return false, err
	}
	return same && (st.State == "ready" || st.State == "delayed"), nil
}
