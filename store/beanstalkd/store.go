package beanstalkd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/rs/zerolog"
)

// Store is one Laravel queue connection with driver "beanstalkd". It is
// safe for concurrent use.
type Store struct {
	cfg  Config
	db   jobqueue.Repository
	pool *pool
	log  zerolog.Logger
	now  func() time.Time

	mu sync.Mutex
	// held are the jobs this store reserved and has not settled, by job
	// id: the fence of every write about them.
	held map[uint64]*hold
	// givenBack maps the row ids of jobs given back (Unreserve) to the id
	// of the job that stands for them now, which claims leave in place
	// while the worker excludes the row.
	givenBack map[int64]uint64
	// left is what the last claim of each tube left at its head.
	left map[string]jobqueue.LeftJobs
}

// hold is a reservation this store made.
type hold struct {
	conn *conn
	// reserves is the job's reserves count after this store's reserve:
	// the attempt it runs.
	reserves int64
	pri      uint32
	ttr      int64
	// unsure: a write about the job failed without an answer; it may
	// have landed.
	unsure bool
	// w is an outcome written in steps (Fail, Finish), nil before one.
	w *write
}

// Options are New's settings beyond the connection's.
type Options struct {
	// Conns is how many connections claim jobs (4 when 0): each job's
	// writes go through the connection that reserved it.
	Conns  int
	Logger zerolog.Logger
}

// New is the store of the beanstalkd queue connection cfg, with the app's
// database side db: a database.Queue opened with the same connection name
// (failed_jobs.connection), whose failed_jobs, job_batches and cache
// tables it uses. It connects once to check that beanstalkd answers.
// Neither db nor the connections are closed but by Close (db never).
func New(ctx context.Context, cfg Config, db jobqueue.Repository, opts Options) (*Store, error) {
	if db == nil {
		return nil, errors.New("beanstalkd: New needs the app's database (failed jobs, batches)")
	}
	if cfg.Connection != db.Connection() {
		return nil, fmt.Errorf("beanstalkd: the database side records failed jobs under connection %q, the beanstalkd queue is connection %q: open it with the same name", db.Connection(), cfg.Connection)
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	size := opts.Conns
	if size <= 0 {
		size = 4
	}
	s := &Store{cfg: cfg, db: db, pool: &pool{cfg: cfg, size: size}, log: opts.Logger, now: time.Now,
		held: map[uint64]*hold{}, givenBack: map[int64]uint64{}, left: map[string]jobqueue.LeftJobs{}}
	if err := s.Ping(ctx); err != nil {
		s.pool.close()
		return nil, fmt.Errorf("queue connection %q: beanstalkd at %s does not answer: %w", cfg.Connection, cfg.Addr(), err)
	}
	if err := s.checkVersion(ctx); err != nil {
		s.pool.close()
		return nil, err
	}
	return s, nil
}

// checkVersion refuses a beanstalkd older than 1.12, which has no
// reserve-job: claims could then only reserve whatever comes first.
func (s *Store) checkVersion(ctx context.Context) error {
	c, err := s.pool.adminConn(ctx)
	if err != nil {
		return err
	}
	if err := c.lock(ctx); err != nil {
		return err
	}
	defer c.unlock()
	stats, err := c.c.Stats()
	if err != nil {
		return err
	}
	if v := stats["version"]; !versionOK(v) {
		return fmt.Errorf("queue connection %q: beanstalkd at %s is version %q; laraworker needs 1.12 or newer (its reserve-job command reserves the very job a claim chose, never one Go would have to give back)", s.cfg.Connection, s.cfg.Addr(), v)
	}
	return nil
}

// versionOK reports whether stats' version is 1.12 or newer.
func versionOK(v string) bool {
	var major, minor int
	_, err := fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d.%d", &major, &minor)
	return err == nil && (major > 1 || major == 1 && minor >= 12)
}

// Close closes the connections to beanstalkd: the jobs they still hold go
// back to ready at once, their attempt counted (as after a crash).
func (s *Store) Close() error { return s.pool.close() }

// Config is the connection's configuration.
func (s *Store) Config() Config { return s.cfg }

// Ping checks that beanstalkd and the database answer.
func (s *Store) Ping(ctx context.Context) error {
	c, err := s.pool.adminConn(ctx)
	if err == nil {
		_, err = c.do(ctx, statsCmd)
	}
	return errors.Join(err, s.db.Ping(ctx))
}

// Connection is the queue connection's name.
func (s *Store) Connection() string { return s.cfg.Connection }

// DefaultQueue is the connection's default tube, which a claim of ""
// serves.
func (s *Store) DefaultQueue() string { return s.cfg.Queue }

// RetryAfter is retry_after: the time-to-run Laravel gives every job.
func (s *Store) RetryAfter() time.Duration { return s.cfg.RetryAfter }

// tube is the tube of a queue name ("" is the default one).
func (s *Store) tube(queue string) string {
	if queue == "" {
		return s.cfg.Queue
	}
	return queue
}

// SharedCache is jobqueue.SharedState's: the repository's.
func (s *Store) SharedCache() jobqueue.Cache { return s.db.SharedCache() }

// LockStores is jobqueue.SharedState's: the repository's.
func (s *Store) LockStores() map[string]jobqueue.LockStore { return s.db.LockStores() }

// DefaultCacheStore is the app's default cache store's name.
func (s *Store) DefaultCacheStore() string { return s.db.DefaultCacheStore() }

// HooksQueue is the repository's hooks queue.
func (s *Store) HooksQueue() (connection, queue string, ok bool) { return s.db.HooksQueue() }

// StateStores is jobqueue.SharedState's: the repository's.
func (s *Store) StateStores() map[string]jobqueue.StateStore { return maps.Clone(s.db.StateStores()) }

// DurationLimiters is jobqueue.SharedState's: the repository's.
func (s *Store) DurationLimiters() map[string]jobqueue.DurationLimiter {
	return maps.Clone(s.db.DurationLimiters())
}

// FindBatch reads a batch from job_batches.
func (s *Store) FindBatch(ctx context.Context, id string) (jobqueue.Batch, error) {
	return s.db.FindBatch(ctx, id)
}

// ListBatches lists the batches of job_batches (the dashboard's page).
func (s *Store) ListBatches(ctx context.Context, before string, limit int) ([]jobqueue.Batch, error) {
	return s.db.ListBatches(ctx, before, limit)
}

// CancelBatch cancels a batch in job_batches.
func (s *Store) CancelBatch(ctx context.Context, id string) error {
	return s.db.CancelBatch(ctx, id)
}

// ModelExists looks an Eloquent model's row up in the app's database.
func (s *Store) ModelExists(ctx context.Context, table, key string, id any) (bool, error) {
	return s.db.ModelExists(ctx, table, key, id)
}

// TraceDestination names a queue in spans as PHP's instrumentation names
// BeanstalkdQueue's: messaging.system "beanstalk", and the tube.
func (s *Store) TraceDestination(queue string) (system, name string) {
	return "beanstalk", s.tube(queue)
}

// The contract, and the optional capabilities the beanstalkd store has:
// the model lookup (its repository's) and the report of the jobs its
// claims leave at the head of a tube.
var (
	_ jobqueue.Store        = (*Store)(nil)
	_ jobqueue.ModelLookup  = (*Store)(nil)
	_ jobqueue.LeftReporter = (*Store)(nil)
)

// reservation is the JobRow.Reservation of a hold: the connection and
// the reserves count, which name one reservation of the job.
func reservation(c *conn, reserves int64) string {
	return strconv.FormatUint(c.id, 10) + ":" + strconv.FormatInt(reserves, 10)
}

// holdOf is the store's hold of the row's reservation, nil when it has
// none (settled, lost, or a row of another reservation).
func (s *Store) holdOf(r jobqueue.JobRow) *hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[uint64(r.ID)]
	if h == nil || reservation(h.conn, h.reserves) != r.Reservation {
		return nil
	}
	return h
}

// release forgets the hold of the row's reservation.
func (s *Store) drop(r jobqueue.JobRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[uint64(r.ID)]; h != nil && reservation(h.conn, h.reserves) == r.Reservation {
		delete(s.held, uint64(r.ID))
	}
}

// markUnsure records that a write about h failed without an answer.
func (s *Store) markUnsure(h *hold) {
	s.mu.Lock()
	h.unsure = true
	s.mu.Unlock()
}

func (s *Store) isUnsure(h *hold) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return h.unsure
}
