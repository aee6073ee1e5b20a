package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Classes of the suite's jobs: the worker serves Served, never Foreign
// (a class only PHP's workers run).
const (
	Served  = `App\Jobs\SendMail`
	Foreign = `App\Jobs\PhpOnly`
)

// realWait bounds a wait on the real clock for a reservation or a delay
// to pass (retry_after of a few seconds, rounded up to whole seconds,
// on a loaded machine).
const realWait = 20 * time.Second

// env is one test's store and what the suite needs of it.
type env struct {
	t   *testing.T
	cfg Config
	o   Opened
	s   jobqueue.Store
	ctx context.Context
}

func newEnv(t *testing.T, cfg Config) *env {
	o := cfg.Open(t)
	if o.QueueName != nil {
		cfg.QueueName = o.QueueName
	}
	if o.RecordedQueue == nil {
		o.RecordedQueue = func(q string) string { return q }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return &env{t: t, cfg: cfg, o: o, s: o.Store, ctx: ctx}
}

// q is the store's name of the suite's queue name.
func (e *env) q(name string) string { return e.cfg.QueueName(name) }

// qs maps several queue names.
func (e *env) qs(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = e.q(n)
	}
	return out
}

// job is a payload as dispatch() writes it for class (Laravel 12.51+'s
// shape), with its uuid.
func (e *env) job(class string) (raw []byte, uuid string) {
	e.t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(class), payload.BuildOptions{Shape: payload.Shape1251})
	if err != nil {
		e.t.Fatal(err)
	}
	p, err := payload.Parse(raw)
	if err != nil {
		e.t.Fatal(err)
	}
	return raw, p.UUID
}

// push pushes a job of class onto queue (the suite's name) and returns
// its uuid.
func (e *env) push(queue, class string) string {
	e.t.Helper()
	raw, uuid := e.job(class)
	e.pushRaw(queue, raw, 0)
	return uuid
}

// pushRaw pushes raw bytes onto queue after delay.
func (e *env) pushRaw(queue string, raw []byte, delay time.Duration) jobqueue.JobID {
	e.t.Helper()
	id, err := e.s.Push(e.ctx, jobqueue.PushItem{Queue: e.q(queue), Payload: raw, Delay: delay})
	if err != nil {
		e.t.Fatalf("push onto %s: %v", queue, err)
	}
	return id
}

// claimOpts claims up to n jobs of queues (the suite's names).
func (e *env) claimOpts(queues []string, n int, opts jobqueue.ClaimOptions) []jobqueue.JobRow {
	e.t.Helper()
	rows, err := e.s.Claim(e.ctx, e.qs(queues...), n, opts)
	if err != nil {
		e.t.Fatalf("claim %d of %v: %v", n, queues, err)
	}
	return rows
}

// claim claims exactly n jobs of queue, in as many claims as the store
// needs (SQS hands out what one receive found).
func (e *env) claim(queue string, n int) []jobqueue.JobRow {
	e.t.Helper()
	var rows []jobqueue.JobRow
	testwait.Poll(realWait, func() bool {
		rows = append(rows, e.claimOpts([]string{queue}, n-len(rows), jobqueue.ClaimOptions{})...)
		return len(rows) >= n
	})
	if len(rows) != n {
		e.t.Fatalf("claimed %d jobs of %s, want %d", len(rows), queue, n)
	}
	return rows
}

// recorded is the queue a claimed or failed job of queue names.
func (e *env) recorded(queue string) string { return e.o.RecordedQueue(e.q(queue)) }

// claimNone checks that queue has nothing to claim now.
func (e *env) claimNone(queue, why string) {
	e.t.Helper()
	if rows := e.claimOpts([]string{queue}, 10, jobqueue.ClaimOptions{}); len(rows) != 0 {
		e.t.Fatalf("%s: claimed %d job(s) (%s), want none", why, len(rows), uuids(e.t, rows))
	}
}

// pass lets d pass: the fake clock moves; on the real clock nothing
// happens here (the caller polls with claimWithin).
func (e *env) pass(d time.Duration) {
	if e.o.Clock != nil {
		e.o.Clock.Advance(d)
	}
}

// claimAfter lets d pass and claims the n jobs of queue that come back
// then: on the real clock, it polls until they do.
func (e *env) claimAfter(d time.Duration, queue string, n int) []jobqueue.JobRow {
	e.t.Helper()
	e.pass(d)
	var rows []jobqueue.JobRow
	testwait.Until(e.t, realWait, "jobs of "+queue+" to come back", func() bool {
		got := e.claimOpts([]string{queue}, n-len(rows), jobqueue.ClaimOptions{})
		rows = append(rows, got...)
		return len(rows) >= n
	})
	return rows
}

// retryAfter is how long past its reservation a job comes back.
func (e *env) retryAfter() time.Duration { return e.s.RetryAfter() + time.Second }

// expired lets the reservations of the jobs claimed so far expire, on
// the fake clock, or waits for it on the real one (a claim of queue
// returns them then, which the caller does).
func (e *env) expired() { e.pass(e.retryAfter()) }

// delay is a release or push delay long enough to observe the job
// waiting: on the real clock a few seconds (a claim right after the
// write must see it delayed even on a loaded machine).
func (e *env) delay() time.Duration {
	if e.o.Clock != nil {
		return 30 * time.Second
	}
	return 3 * time.Second
}

// unsupported checks the answer of op: nil where the store supports it,
// an error wrapping jobqueue.ErrNotSupported where it declared it does
// not. It reports whether the operation ran.
func (e *env) unsupported(op Op, err error) bool {
	e.t.Helper()
	if e.cfg.supports(op) {
		if err != nil {
			e.t.Fatalf("%s: %v", op, err)
		}
		return true
	}
	if !errors.Is(err, jobqueue.ErrNotSupported) {
		e.t.Fatalf("%s is declared unsupported, but returned %v instead of jobqueue.ErrNotSupported", op, err)
	}
	return false
}

// size is the queue's counts (zero when Sizes lists it not).
func (e *env) size(queue string) jobqueue.QueueSize {
	e.t.Helper()
	if !e.cfg.supports(OpSizesEveryQueue) {
		return e.o.Size(e.t, e.q(queue))
	}
	sizes, err := e.s.Sizes(e.ctx)
	if err != nil {
		e.t.Fatalf("sizes: %v", err)
	}
	for _, s := range sizes {
		if s.Queue == e.q(queue) {
			return s
		}
	}
	return jobqueue.QueueSize{Queue: e.q(queue)}
}

// total checks that queue holds want jobs in all (any state).
func (e *env) total(queue string, want int64, why string) {
	e.t.Helper()
	if got := e.size(queue); got.Total() != want {
		e.t.Fatalf("%s: queue %s holds %+v, want %d job(s)", why, queue, got, want)
	}
}

// failed lists the failed jobs.
func (e *env) failed() []jobqueue.FailedJob {
	e.t.Helper()
	f, err := e.s.ListFailed(e.ctx, "")
	if err != nil {
		e.t.Fatalf("list failed: %v", err)
	}
	return f
}

// batch reads a batch.
func (e *env) batch(id string) jobqueue.Batch {
	e.t.Helper()
	b, err := e.s.FindBatch(e.ctx, id)
	if err != nil {
		e.t.Fatalf("find batch %s: %v", id, err)
	}
	return b
}

// uuid is a fresh uuid.
func (e *env) uuid() string {
	e.t.Helper()
	u, err := payload.NewUUID()
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// uuidOf reads a payload's uuid ("" when it has none).
func uuidOf(raw []byte) string {
	p, err := payload.Parse(raw)
	if err != nil {
		return ""
	}
	return p.UUID
}

// uuids lists the rows' payload uuids, for messages and comparisons.
func uuids(t *testing.T, rows []jobqueue.JobRow) []string {
	t.Helper()
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = uuidOf(r.Payload)
	}
	return out
}

// sameSet tells whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
