package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/laraworker/laraworker/internal/horizon"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
)

// Horizon's records: with Options.Horizon set, the store writes, after
// each outcome it has written, what Horizon's PHP listeners write for
// the same event (package internal/horizon). They come after the queue's own
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
func horizonJob(r jobqueue.JobRow) horizon.Job {
	return horizon.Job{Queue: r.Queue, Payload: r.Reservation}
}

// horizonReserved records a pop: the jobs its migrations moved, then the
// jobs it reserved.
func (s *Store) horizonReserved(ctx context.Context, res redisproto.PopResult, queue string, reserved []*redisproto.Job) {
	if s.horizon == nil || (len(res.Migrated) == 0 && len(reserved) == 0) {
		return
	}
	migrated := make([]horizon.Job, len(res.Migrated))
	for i, m := range res.Migrated {
		migrated[i] = horizon.Job{Queue: queue, Payload: m}
	}
	jobs := make([]horizon.Job, len(reserved))
	for i, j := range reserved {
		jobs[i] = horizon.Job{Queue: j.Queue, Payload: j.Reserved}
	}
	s.horizonFailed("reserved", s.horizon.Reserved(context.WithoutCancel(ctx), migrated, jobs))
}

// horizonCompleted records finished jobs.
func (s *Store) horizonCompleted(ctx context.Context, rows []jobqueue.JobRow) {
	if s.horizon == nil || len(rows) == 0 {
		return
	}
	jobs := make([]horizon.Job, len(rows))
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

// horizonRecorder reads config('horizon') and connects to its Redis as
// Horizon::use() set it up (horizonConnection).
func (o *Opened) horizonRecorder(app App) (*horizon.Recorder, error) {
	cfg, err := horizon.FromLaravel(app.HorizonConfig)
	if err != nil {
		return nil, err
	}
	conn, err := horizonConnection(&cfg, app)
	if err != nil {
		return nil, err
	}
	client, err := redisproto.NewClient(conn)
	if err != nil {
		return nil, err
	}
	o.closers = append(o.closers, client.Close)
	return horizon.New(client, app.Connection, cfg), nil
}

// horizonConnection is the Redis connection Horizon's repositories write
// through, and the prefix they write under (set in cfg.Prefix).
//
// Read through the app's PHP, the app has booted, so Horizon::use() has
// made it (config's "connection_made" says which RedisManager resolves
// for "horizon"): database.redis.horizon, a single server with
// options.prefix = horizon.prefix ("horizon:" when empty); or, with
// Horizon's Redis Cluster support (laravel/horizon PR #1760, on Laravel
// 13.5+), database.redis.clusters.horizon, the whole cluster with the
// prefix wrapped in a hash tag ("{horizon:}") so that every key shares a
// slot. Read from the config files, it is made here the same way from
// horizon.use, which must then name a single server: which of the two
// Horizon::use() an app runs on a cluster is only known to its PHP.
func horizonConnection(cfg *horizon.Config, app App) (redisproto.RedisConfig, error) {
	clusters, _ := app.Redis["clusters"].(map[string]any)
	_, useIsCluster := clusters[cfg.Use]
	made, _ := app.HorizonConfig["connection_made"].(string)
	var conn redisproto.RedisConfig
	var err error
	switch {
	case made == "cluster":
		if conn, err = redisproto.RedisConnection("horizon", app.Redis, app.Version); err != nil {
			return conn, fmt.Errorf("redisstore: Horizon's records (database.redis.clusters.horizon, made by Horizon::use): %w", err)
		}
		if !conn.Cluster || !hasHashTag(conn.Prefix) {
			return conn, fmt.Errorf("redisstore: Horizon's records: database.redis.clusters.horizon has the prefix %q, without the hash tag Horizon gives it: its keys would be spread over the cluster's slots", conn.Prefix)
		}
	case useIsCluster:
		return conn, fmt.Errorf("redisstore: Horizon's records: horizon.use names the cluster %q, and this app's Horizon writes its records to the cluster's first node as a single server (Horizon before its Redis Cluster support, laravel/horizon PR #1760 on Laravel 13.5+, or the config read without the app's php): Go does not (run with --horizon off, or upgrade Horizon)", cfg.Use)
	case made == "standalone":
		if conn, err = redisproto.RedisConnection("horizon", app.Redis, app.Version); err != nil {
			return conn, fmt.Errorf("redisstore: Horizon's records (database.redis.horizon, made by Horizon::use): %w", err)
		}
	default:
		if conn, err = redisproto.RedisConnection(cfg.Use, app.Redis, app.Version); err != nil {
			return conn, fmt.Errorf("redisstore: Horizon's records (horizon.use): %w", err)
		}
		conn.Prefix = cfg.Prefix
	}
	// The recorder puts the prefix before each key itself.
	cfg.Prefix = conn.Prefix
	return conn, nil
}

// hasHashTag is Laravel's Connection::hasHashTag: a "{" followed, after
// at least one character, by a "}".
func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	end := strings.IndexByte(key[open+1:], '}')
	return end > 0
}
