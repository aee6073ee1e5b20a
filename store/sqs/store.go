package sqs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/sqsproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
)

// Store is one Laravel queue connection with driver "sqs". It is safe for
// concurrent use.
type Store struct {
	q   *sqsproto.Queue
	db  jobqueue.Repository
	log zerolog.Logger
	enc *payload.Encrypter
	// wait is the long poll of a claim that found every queue empty.
	wait time.Duration

	// seq numbers the jobs handed out (JobRow.ID).
	seq atomic.Int64

	mu sync.Mutex
	// held is what the store knows of each job handed out and not settled,
	// by JobRow.ID.
	held map[int64]*held
	// givenBack maps the ids of jobs given back (Unreserve) to their
	// MessageId, which claims leave alone while the worker excludes them.
	givenBack map[int64]string
	// visibility is each queue's VisibilityTimeout, by URL.
	visibility map[string]time.Duration
	// idle is the queues whose last claim received only jobs it gave back:
	// CountClaimable counts nothing there, and no long poll waits on them.
	idle map[string]bool
	// retryAfter is the default queue's VisibilityTimeout (RetryAfter).
	retryAfter time.Duration

	// polls are long polls still under way after their claim returned
	// (it was cancelled): Close waits for them and gives back what they
	// received.
	polls sync.WaitGroup
}

// held is a job handed out: its message and the state of its outcome.
type held struct {
	msg sqsproto.Message
	// pointer is the cache key of a 13.9+ pointer body ("" for a plain
	// one).
	pointer string
	// vapor: the payload counts its attempts (laravel/vapor-core).
	vapor bool
	// Of an outcome written in steps, what is done already (a retry of
	// the outcome goes on from there).
	fenced, pushed, deleted, failedRow, batchDone bool
	failedUUID                                    string
	// next is the chain link's message as sent (prepared once).
	next []byte
	// hookID is a failure's parked hook job.
	hookID int64
	hook   []byte
}

// Options are New's settings beyond the two queues.
type Options struct {
	// Logger receives what the store reports (jobs it gives back, pointer
	// bodies it cannot follow).
	Logger zerolog.Logger
	// Encrypter decrypts encrypted commands, to read a FIFO job's message
	// group when Go pushes one (a chain's next link, a retry).
	Encrypter *payload.Encrypter
	// Wait is how long a claim that found every queue empty waits on the
	// first queue for a message (a long poll); 0 is DefaultWait, negative
	// never waits.
	Wait time.Duration
}

// DefaultWait is a claim's long poll when every queue is empty: Laravel's
// worker receives with the queue's own wait (0 unless set on the queue)
// and sleeps; a long poll answers at once when a job comes, and costs one
// request where PHP's loop sends several. A stop waits for the poll under
// way (SQS may have handed it jobs, which are then given back): 5 s keeps
// a stop short.
const DefaultWait = 5 * time.Second

// New is the store on the SQS queue q with the app's database side db: a
// database.Queue opened with the same connection name, whose failed_jobs,
// job_batches and cache tables it uses. It reads the default queue's
// VisibilityTimeout (RetryAfter): an unknown queue or bad credentials
// fail here. Neither q nor db is closed by the store. q's package is
// internal: a program outside the module opens the store with Open, from
// the app's configuration.
func New(ctx context.Context, q *sqsproto.Queue, db jobqueue.Repository, opts Options) (*Store, error) {
	if q == nil || db == nil {
		return nil, errors.New("sqsstore: New needs the SQS queue and the app's database")
	}
	if q.Connection() != db.Connection() {
		return nil, fmt.Errorf("sqsstore: the database side records failed jobs under connection %q, the SQS queue is connection %q: open it with the same name", db.Connection(), q.Connection())
	}
	s := &Store{q: q, db: db, log: opts.Logger, enc: opts.Encrypter, wait: opts.Wait,
		held: map[int64]*held{}, givenBack: map[int64]string{}, visibility: map[string]time.Duration{}, idle: map[string]bool{}}
	if s.wait == 0 {
		s.wait = DefaultWait
	}
	if s.wait > sqsproto.MaxWait {
		s.wait = sqsproto.MaxWait
	}
	if cfg := q.Config(); cfg.HTTPTimeout > 0 && s.wait > cfg.HTTPTimeout-5*time.Second {
		// A long poll must answer inside the HTTP timeout.
		s.wait = max(cfg.HTTPTimeout-5*time.Second, 0)
	}
	vt, err := s.visibilityOf(ctx, q.URL(""))
	if err != nil {
		return nil, err
	}
	s.retryAfter = vt
	return s, nil
}

// visibilityOf is a queue's VisibilityTimeout, read once. A queue whose
// visibility timeout is 0 would hand every job to every worker at once:
// refused.
func (s *Store) visibilityOf(ctx context.Context, url string) (time.Duration, error) {
	s.mu.Lock()
	vt, ok := s.visibility[url]
	s.mu.Unlock()
	if ok {
		return vt, nil
	}
	a, err := s.q.Attributes(ctx, url)
	if err != nil {
		return 0, err
	}
	if a.VisibilityTimeout < time.Second {
		return 0, fmt.Errorf("sqsstore: queue %s has a VisibilityTimeout of %s: a received job is visible to every other worker at once; set the queue's visibility timeout above the longest job's run time", url, a.VisibilityTimeout)
	}
	s.mu.Lock()
	s.visibility[url] = a.VisibilityTimeout
	s.mu.Unlock()
	return a.VisibilityTimeout, nil
}

// Queue is the SQS side.
func (s *Store) Queue() *sqsproto.Queue { return s.q }

// Connection is the queue connection's name.
func (s *Store) Connection() string { return s.q.Connection() }

// DefaultQueue is jobqueue.DefaultQueuer's: the connection's "queue".
func (s *Store) DefaultQueue() string { return s.q.Config().Queue }

// RetryAfter is the default queue's VisibilityTimeout: how long a
// received message stays invisible to other workers (Laravel's
// reservation on SQS; retry_after does not apply). Go extends it while a
// job runs (Extend).
func (s *Store) RetryAfter() time.Duration { return s.retryAfter }

// Ping checks that SQS (the default queue) and the database answer.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.q.Attributes(ctx, s.q.URL(""))
	return errors.Join(err, s.db.Ping(ctx))
}

// Close waits for long polls a cancelled claim left under way (at most
// the wait) and gives back what they received, then logs the requests the
// store sent, by action (SQS bills each).
func (s *Store) Close() error {
	s.polls.Wait()
	counts := s.q.Requests().Counts()
	ev := s.log.Info().Int64("total", s.q.Requests().Total())
	for action, n := range counts {
		ev = ev.Int64(action, n)
	}
	ev.Str("connection", s.Connection()).Msg("sqs requests")
	return nil
}

// SharedCache is jobqueue.CacheAccess's: the app's default cache store
// as the database side shares it.
func (s *Store) SharedCache() jobqueue.Cache { return s.db.SharedCache() }

// LockStores is jobqueue.CacheAccess's.
func (s *Store) LockStores() map[string]jobqueue.LockStore { return s.db.LockStores() }

// DefaultCacheStore is the app's default cache store's name.
func (s *Store) DefaultCacheStore() string { return s.db.DefaultCacheStore() }

// HooksQueue is jobqueue.HookPusher's: the database side's hooks queue.
func (s *Store) HooksQueue() (connection, queue string, ok bool) { return s.db.HooksQueue() }

// StateStores is jobqueue.MiddlewareState's.
func (s *Store) StateStores() map[string]jobqueue.StateStore { return s.db.StateStores() }

// DurationLimiters is jobqueue.MiddlewareState's.
func (s *Store) DurationLimiters() map[string]jobqueue.DurationLimiter {
	return s.db.DurationLimiters()
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

// TraceDestination names a queue as OpenTelemetry's PHP instrumentation
// names an SQS queue: messaging.system "aws_sqs" and the queue URL.
func (s *Store) TraceDestination(queue string) (system, name string) {
	return "aws_sqs", s.q.URL(queue)
}

// The contract, and the optional capability the SQS store has: the
// model lookup (its repository's).
var (
	_ jobqueue.Store       = (*Store)(nil)
	_ jobqueue.ModelLookup = (*Store)(nil)
)

// heldOf is what the store holds of a row; nil when it does not (a row
// settled already, or not this store's).
func (s *Store) heldOf(r jobqueue.JobRow) *held {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[r.ID]
}

// forget drops a settled row.
func (s *Store) forget(r jobqueue.JobRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, r.ID)
}

// errUnknownRow refuses a write about a row this store did not hand out
// (or settled already).
var errUnknownRow = errors.New("sqsstore: the job is not one this store handed out, or its outcome was written already")
