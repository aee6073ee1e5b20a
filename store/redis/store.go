package redis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/horizon"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/rs/zerolog"
)

// Store is one Laravel queue connection with driver "redis". It is safe
// for concurrent use.
type Store struct {
	q *redisproto.Queue
	// retry is how long a pop or an Extend reserves a job, in seconds (0:
	// for ever), and blocking whether claims wait (block_for): q's
	// configuration, read by every claim.
	retry    int64
	blocking bool
	// waiter is q's waiter on the notify lists (wait.go), taken at New
	// (it connects only when a wait starts).
	waiter *redisproto.NotifyWaiter
	// db is the app's database side: failed jobs, batches, hook jobs.
	db    jobqueue.Repository
	cache jobqueue.Cache
	locks map[string]jobqueue.LockStore
	// state and limiters are where job middleware keep their state.
	state    map[string]jobqueue.StateStore
	limiters map[string]jobqueue.DurationLimiter
	log      zerolog.Logger

	// seq numbers the jobs handed out (JobRow.ID).
	seq atomic.Int64

	mu sync.Mutex
	// writes are the outcomes under way whose earlier tries may have
	// landed, or that are written in steps, by claim (writeKey).
	writes map[string]*write
	// givenBack maps the ids of jobs given back (Unreserve) to their
	// payload "id", which the claim leaves in place.
	givenBack map[int64]string
	// haveGivenBack: givenBack is not empty (a claim skips leaveIDs's
	// lock when it is).
	haveGivenBack atomic.Bool
	// lastFilter is the class filter of the last claim, as a pop's
	// (claim.go).
	lastFilter atomic.Pointer[popFilter]
	// tokens counts, by queue, the notify tokens WaitForJob took that no
	// claim has settled yet (wait.go).
	tokens map[string]int

	heads heads

	// horizon writes Horizon's records (nil: the app has no Horizon, or
	// they are off).
	horizon    *horizon.Recorder
	horizonLog horizonLog

	// testAfterFailedRow runs in Fail between the failed_jobs row and the
	// delete from Redis (tests).
	testAfterFailedRow func()
}

// Options are New's settings beyond the two queues. The zero value
// shares the database cache store when it is the app's default.
type Options struct {
	// Cache is the app's default cache store when Go can share it and it
	// is not the database store (a rediscache.Cache for CACHE_DRIVER
	// redis): the queue:restart signal and the maxExceptions counters.
	// Nil: the repository's (its SharedCache), which is nil unless the
	// app's default store is "database".
	Cache jobqueue.Cache
	// Locks are lock stores by config/cache.php store name ("redis": a
	// redislock.Store) in addition to the database store's.
	Locks map[string]jobqueue.LockStore
	// StateStores are cache stores by config/cache.php name ("redis") in
	// addition to the database store's, and DurationLimiters the Redis
	// connections' limiters by name: where job middleware keep their
	// state (jobqueue.SharedState).
	StateStores      map[string]jobqueue.StateStore
	DurationLimiters map[string]jobqueue.DurationLimiter
	// Logger receives what the store tells about jobs it leaves in place.
	Logger zerolog.Logger
	// Horizon, when set, writes Horizon's records of the jobs the store
	// reserves, releases, finishes and fails, as Horizon's listeners do
	// after a PHP worker (see horizon.go).
	Horizon *horizon.Recorder
}

// New is the store on the Redis queue q, with the app's database side
// db: a repository on the app's database (package store/database's Queue,
// opened with the same connection name, failed_jobs.connection), whose
// failed_jobs, job_batches and cache tables it uses. Neither is closed by
// the store. q's package is internal: a program outside the module opens
// the store with Open, from the app's configuration.
func New(q *redisproto.Queue, db jobqueue.Repository, opts Options) (*Store, error) {
	if q == nil || db == nil {
		return nil, errors.New("redisstore: New needs the redis queue and the app's database (a jobqueue.Repository)")
	}
	if q.Connection() != db.Connection() {
		return nil, fmt.Errorf("redisstore: the database side records failed jobs under connection %q, the redis queue is connection %q: open it with the same name", db.Connection(), q.Connection())
	}
	s := &Store{q: q, db: db, cache: opts.Cache, log: opts.Logger, horizon: opts.Horizon,
		writes: map[string]*write{}, givenBack: map[int64]string{}, tokens: map[string]int{}}
	if cfg := q.Config(); !cfg.NeverExpire {
		s.retry = int64(cfg.RetryAfter / time.Second)
	}
	s.blocking = q.Config().BlockFor != nil
	s.waiter = q.NotifyWaiter()
	if s.cache == nil {
		s.cache = db.SharedCache()
	}
	s.locks = db.LockStores()
	for name, l := range opts.Locks {
		s.locks[name] = l
	}
	s.state = db.StateStores()
	for name, st := range opts.StateStores {
		s.state[name] = st
	}
	s.limiters = opts.DurationLimiters
	return s, nil
}

// Horizon is the recorder of Horizon's records, nil when off.
func (s *Store) Horizon() *horizon.Recorder { return s.horizon }

// Queue is the Redis side.
func (s *Store) Queue() *redisproto.Queue { return s.q }

// Connection is the queue connection's name.
func (s *Store) Connection() string { return s.q.Connection() }

// DefaultQueue is the connection's "queue", which a claim of "" serves.
func (s *Store) DefaultQueue() string { return s.q.Config().Queue }

// RetryAfter is the connection's retry_after.
func (s *Store) RetryAfter() time.Duration { return s.q.RetryAfter() }

// Ping checks that Redis and the database answer.
func (s *Store) Ping(ctx context.Context) error {
	return errors.Join(s.q.Ping(ctx), s.db.Ping(ctx))
}

// SharedCache is jobqueue.SharedState's: Options.Cache, else the
// database cache store when it is the app's default store.
func (s *Store) SharedCache() jobqueue.Cache { return s.cache }

// LockStores is jobqueue.SharedState's: the database store's locks and
// Options.Locks.
func (s *Store) LockStores() map[string]jobqueue.LockStore {
	out := make(map[string]jobqueue.LockStore, len(s.locks))
	for k, v := range s.locks {
		out[k] = v
	}
	return out
}

// DefaultCacheStore is the app's default cache store's name.
func (s *Store) DefaultCacheStore() string { return s.db.DefaultCacheStore() }

// HooksQueue is the database side's hooks queue.
func (s *Store) HooksQueue() (connection, queue string, ok bool) { return s.db.HooksQueue() }

// StateStores is jobqueue.SharedState's: the database store's and
// Options.StateStores.
func (s *Store) StateStores() map[string]jobqueue.StateStore { return maps.Clone(s.state) }

// DurationLimiters is jobqueue.SharedState's: Options.DurationLimiters.
func (s *Store) DurationLimiters() map[string]jobqueue.DurationLimiter { return maps.Clone(s.limiters) }

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

// The contract, and the optional capabilities the Redis store has: the
// model lookup (its database side's) and the report of the jobs its
// claims leave at the head of a list.
var (
	_ jobqueue.Store        = (*Store)(nil)
	_ jobqueue.ModelLookup  = (*Store)(nil)
	_ jobqueue.LeftReporter = (*Store)(nil)
)

// row is the JobRow of a popped job.
func (s *Store) row(j *redisproto.Job) jobqueue.JobRow {
	at := j.ReservedUntil - s.retry
	return jobqueue.JobRow{
		ID: s.seq.Add(1), Queue: j.Queue, Payload: j.Payload, Attempts: j.Attempts,
		ReservedAt: &at, Reservation: j.Reserved, AvailableAt: at,
	}
}

// job is the redisproto.Job a JobRow names: all a write needs.
func job(r jobqueue.JobRow) *redisproto.Job {
	return &redisproto.Job{Queue: r.Queue, Payload: r.Payload, Reserved: r.Reservation, Attempts: r.Attempts}
}

// reservedUntil is the score the row's reservation had when the worker
// last heard of it: pop or Extend.
func (s *Store) reservedUntil(r jobqueue.JobRow) int64 {
	if r.ReservedAt == nil {
		return 0
	}
	return *r.ReservedAt + s.retry
}

// TraceDestination names a queue as OpenTelemetry's PHP instrumentation
// for Laravel names a Redis queue in its spans: messaging.system "redis",
// and RedisQueue::getQueue's "queues:<name>" as the destination (the
// worker's spans are "process queues:<name>", as PHP's are).
func (s *Store) TraceDestination(queue string) (system, name string) {
	return "redis", "queues:" + queue
}
