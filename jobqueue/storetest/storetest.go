// Package storetest is the conformance suite of the store contract
// (jobqueue.Store): one set of behaviours every store proves, whatever its
// backend, as River's riverdrivertest does for its drivers. A store's own
// tests call Run with a factory that opens a fresh store; passing it is
// what "a store" means.
//
// The behaviours are what Laravel's queue promises and what laraworker
// adds: claim order per queue and priority across queues, claims that skip
// the classes the worker does not serve (and look past such a job at the
// head), attempts counted by the reservation, a reservation never deleted
// coming back after retry_after (and nothing else running twice), writes
// fenced by the reservation, release with its delay, delete, fail into the
// failed jobs as queue:failed reads them, chain links and batch counters
// written with the outcome, the queue:* admin operations, and hostile
// payloads that neither loop nor vanish.
//
// A store that cannot do an operation (beanstalkd lists no tube's jobs,
// SQS reads no job by id) returns an error wrapping
// jobqueue.ErrNotSupported; the suite accepts that only for the
// operations the factory declares in Config.Unsupported, and fails a
// declared operation the store does support, so the declaration stays
// true.
package storetest

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// Op names an operation a store may declare it cannot do.
type Op string

// The operations a store may declare unsupported. Each is one admin
// operation of the contract (or a claim feature) that some backend
// lacks; the suite's tests of it then expect jobqueue.ErrNotSupported.
const (
	OpClear           Op = "Clear"
	OpMove            Op = "Move"
	OpCountClasses    Op = "CountClasses"
	OpClassesOnQueues Op = "ClassesOnQueues"
	OpFindJob         Op = "FindJob"
	OpFindJobByUUID   Op = "FindJobByUUID"
	// OpClassesWithoutCase: a claim's class filter matches class names
	// without regard to case, as PHP compares them (the database store
	// on PostgreSQL compares them exactly, as its LIKE does).
	OpClassesWithoutCase Op = "ClassesWithoutCase"
	// OpLookPastForeignHead: a claim takes the served jobs behind one it
	// does not serve at the head of a queue (beanstalkd reserves only a
	// tube's head; declared unsupported, the suite checks that the head
	// and the jobs behind it stay queued).
	OpLookPastForeignHead Op = "LookPastForeignHead"
	// OpSizesEveryQueue: Sizes lists every queue that has jobs (SQS
	// lists no queues: Sizes counts the default queue, Opened.Size the
	// others).
	OpSizesEveryQueue Op = "SizesEveryQueue"
	// OpFencedDelete: Delete tells a job whose reservation was lost and
	// leaves it alone (SQS accepts a stale receipt handle's delete on a
	// standard queue, as PHP's worker meets it).
	OpFencedDelete Op = "FencedDelete"
	// OpFIFO: a queue's jobs are claimed in the order they were pushed
	// (an SQS standard queue promises no order).
	OpFIFO Op = "FIFO"
	// OpSizesByState: Sizes can tell ready, delayed and reserved jobs
	// apart (a store that counts only totals declares it).
	OpSizesByState Op = "SizesByState"
)

// Config is a store under test.
type Config struct {
	// Open opens a fresh, empty store for one test (its queues hold no
	// job, its failed jobs and batches none), closed by t's cleanup.
	Open func(t *testing.T) Opened
	// Unsupported are the operations the store returns
	// jobqueue.ErrNotSupported for. Every other operation must work.
	Unsupported []Op
	// QueueName maps the suite's queue names to the store's (a Redis
	// Cluster store hash-tags them so that a move stays in one slot);
	// nil keeps them.
	QueueName func(string) string
	// MaxPayload is the largest payload the store takes (SQS: 256 KiB
	// without its overflow to S3); 0 means 1 MiB.
	MaxPayload int
}

// Opened is one fresh store.
type Opened struct {
	Store jobqueue.Store
	// Clock, when set, is the fake clock the store runs on: the suite
	// moves it instead of waiting for retry_after and delays to pass.
	// Nil: the store runs on the real clock (a server's), opened with a
	// short retry_after (a few seconds), and the suite polls.
	Clock *Clock
	// QueueName, when set, is Config.QueueName for this store (a store
	// whose queues are per test: SQS queues exist once created).
	QueueName func(string) string
	// RecordedQueue, when set, is the queue a claimed job (JobRow.Queue)
	// and its failed job name for a queue (the store's name of it): SQS's
	// queue URL, as SqsJob's getQueue(). Nil: the queue's name.
	RecordedQueue func(string) string
	// Size, when set, counts one queue's jobs where Sizes lists not every
	// queue (declared by OpSizesEveryQueue).
	Size func(t *testing.T, queue string) jobqueue.QueueSize
	// NewBatch adds a job_batches row of total jobs (without
	// allowFailures) as PendingBatch::store does, in the app's database
	// the store records batches in.
	NewBatch func(t *testing.T, id string, total int)
}

// Clock is a fake clock a store reads through Now.
type Clock struct{ unix atomic.Int64 }

// NewClock is a clock at the current second.
func NewClock() *Clock {
	c := &Clock{}
	c.unix.Store(time.Now().Unix())
	return c
}

// Now is the clock's time, for the store's options.
func (c *Clock) Now() time.Time { return time.Unix(c.unix.Load(), 0) }

// Advance moves the clock forward by d (whole seconds, as Laravel's
// queues count).
func (c *Clock) Advance(d time.Duration) { c.unix.Add(int64((d + time.Second - 1) / time.Second)) }

// Run runs the suite against the store cfg opens, each behaviour a
// parallel subtest on a store of its own.
func Run(t *testing.T, cfg Config) {
	if cfg.QueueName == nil {
		cfg.QueueName = func(s string) string { return s }
	}
	if cfg.MaxPayload == 0 {
		cfg.MaxPayload = 1 << 20
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(newEnv(t, cfg))
		})
	}
}

// supports tells whether the store declared op supported.
func (c Config) supports(op Op) bool { return !slices.Contains(c.Unsupported, op) }

type test struct {
	name string
	run  func(e *env)
}

// tests are the behaviours, in the order of the list.
var tests = []test{
	{"ClaimIsFIFOPerQueue", testClaimFIFO},
	{"ClaimTakesQueuesInPriorityOrder", testClaimPriority},
	{"ClaimSkipsClassesNotServed", testClaimSkipsClasses},
	{"ClaimLooksPastAForeignHead", testClaimLooksPastForeignHead},
	{"ClaimCountsAnAttempt", testClaimCountsAttempt},
	{"UnreserveGivesTheJobBackUncounted", testUnreserve},
	{"ReservationComesBackAfterRetryAfter", testReclaim},
	{"WritesAfterALostReservationAreFenced", testFencedWrites},
	{"DeleteAfterALostReservationIsFenced", testFencedDelete},
	{"WritesAfterTheJobFinishedElsewhereAreFenced", testFencedAfterFinish},
	{"ExtendKeepsTheReservation", testExtend},
	{"ReleaseHonoursItsDelay", testReleaseDelay},
	{"DeleteRemovesTheJob", testDelete},
	{"FailRecordsTheFailedJob", testFail},
	{"FinishPushesTheChainAndCountsTheBatch", testFinishFollowup},
	{"FailCountsTheBatchFailure", testFailBatch},
	{"PushWithDelay", testPushDelay},
	{"Sizes", testSizes},
	{"Clear", testClear},
	{"Move", testMove},
	{"CountClasses", testCountClasses},
	{"FindJob", testFindJob},
	{"RetryPushesTheFailedJobBack", testRetry},
	{"ForgetAndFlush", testForgetFlush},
	{"HostilePayloadsNeitherLoopNorVanish", testHostile},
}
