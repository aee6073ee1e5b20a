package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/redishorizon"
	"github.com/laraworker/laraworker/redisqueue"
)

// Horizon's records: with Options.Horizon set, the store writes, after
// each outcome it has written, what Horizon's PHP listeners write for
// the same event (package redishorizon). They come after the queue's own
// write, which decides: a record whose write fails is logged (and the job
// shows in Horizon as it was), never a reason to redo or undo the
// outcome; a job whose reservation was lost gets no record (whoever holds
// it writes its own).

// horizonLog bounds the log lines about Horizon writes that failed: one,
// then at most one a minute with the count since.
type horizonLog struct {
	mu       sync.Mutex
	last     time.Time
	dropped  int
	failures int64
}

func (s *Store) horizonFailed(what string, err error) {
	if err == nil {
		return
	}
	h := &s.horizonLog
	h.mu.Lock()
	h.failures++
	now := time.Now()
	if !h.last.IsZero() && now.Sub(h.last) < time.Minute {
		h.dropped++
		h.mu.Unlock()
		return
	}
	dropped := h.dropped
	h.last, h.dropped = now, 0
	h.mu.Unlock()
	s.log.Error().Err(err).Str("event", what).Int("similar_unlogged", dropped).
		Msg("writing Horizon's records failed: the job's outcome is written in the queue, but Horizon's dashboard shows the job as it was before (logged at most once a minute)")
}

// HorizonWriteFailures counts the Horizon record writes that failed.
func (s *Store) HorizonWriteFailures() int64 {
	s.horizonLog.mu.Lock()
	defer s.horizonLog.mu.Unlock()
	return s.horizonLog.failures
}

// horizonJob is the job a row names, as Horizon's events carry it.
func horizonJob(r jobqueue.JobRow) redishorizon.Job {
	return redishorizon.Job{Queue: r.Queue, Payload: r.Reservation}
}

// horizonReserved records a pop: the jobs its migrations moved, then the
// jobs it reserved.
func (s *Store) horizonReserved(ctx context.Context, res redisqueue.PopResult, queue string, reserved []*redisqueue.Job) {
	if s.horizon == nil || (len(res.Migrated) == 0 && len(reserved) == 0) {
		return
	}
	migrated := make([]redishorizon.Job, len(res.Migrated))
	for i, m := range res.Migrated {
		migrated[i] = redishorizon.Job{Queue: queue, Payload: m}
	}
	jobs := make([]redishorizon.Job, len(reserved))
	for i, j := range reserved {
		jobs[i] = redishorizon.Job{Queue: j.Queue, Payload: j.Reserved}
	}
	s.horizonFailed("reserved", s.horizon.Reserved(context.WithoutCancel(ctx), migrated, jobs))
}

// horizonCompleted records finished jobs.
func (s *Store) horizonCompleted(ctx context.Context, rows []jobqueue.JobRow) {
	if s.horizon == nil || len(rows) == 0 {
		return
	}
	jobs := make([]redishorizon.Job, len(rows))
	for i, r := range rows {
		jobs[i] = horizonJob(r)
	}
	s.horizonFailed("completed", s.horizon.Completed(context.WithoutCancel(ctx), jobs))
}

// horizonLost forgets the stopwatch of jobs whose reservation was lost.
func (s *Store) horizonLost(rows ...jobqueue.JobRow) {
	if s.horizon == nil {
		return
	}
	for _, r := range rows {
		s.horizon.Forget(r.Reservation)
	}
}

// horizonOutcome records a one-job outcome once written (err nil), or
// forgets the job when its reservation was lost.
func (s *Store) horizonOutcome(r jobqueue.JobRow, err error, record func() error, what string) {
	switch {
	case s.horizon == nil:
	case err == nil:
		s.horizonFailed(what, record())
	case errors.Is(err, jobqueue.ErrReservationLost):
		s.horizon.Forget(r.Reservation)
	}
}

// horizonDispatch is Horizon's push of a job object: the payload
// RedisQueue made gets the uuid as id and Horizon's keys (type, tags,
// silenced, pushedAt). Without Horizon it is unchanged.
func (s *Store) horizonDispatch(raw []byte) ([]byte, error) {
	if s.horizon == nil {
		return raw, nil
	}
	return s.horizon.PrepareDispatch(raw)
}

// horizonPushed records jobs pushed to queue ("" the default queue).
func (s *Store) horizonPushed(ctx context.Context, queue string, payloads ...[]byte) {
	if s.horizon == nil || len(payloads) == 0 {
		return
	}
	if queue == "" {
		queue = s.q.Config().Queue
	}
	s.horizonFailed("pushed", s.horizon.Pushed(context.WithoutCancel(ctx), queue, payloads...))
}

// horizonConfig reads config('horizon') and connects to its Redis: the
// connection horizon.use names, with horizon.prefix (Horizon::use).
func (o *Opened) horizonRecorder(app App) (*redishorizon.Recorder, error) {
	cfg, err := redishorizon.FromLaravel(app.HorizonConfig)
	if err != nil {
		return nil, err
	}
	clusters, _ := app.Redis["clusters"].(map[string]any)
	if _, ok := clusters[cfg.Use]; ok {
		return nil, fmt.Errorf("redisstore: Horizon's records: horizon.use names the cluster %q; Horizon writes its records through the cluster's first node, which Go does not (run with --horizon off)", cfg.Use)
	}
	conn, err := redisqueue.RedisConnection(cfg.Use, app.Redis, app.Version)
	if err != nil {
		return nil, fmt.Errorf("redisstore: Horizon's records (horizon.use): %w", err)
	}
	conn.Prefix = cfg.Prefix
	client, err := redisqueue.NewClient(conn)
	if err != nil {
		return nil, err
	}
	o.closers = append(o.closers, client.Close)
	return redishorizon.New(client, app.Connection, cfg), nil
}
