package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/rs/zerolog"
)

// testConfig runs fast: short sleeps, stop when the queues are empty, no
// memory limit.
func testConfig() Config {
	return Config{
		Sleep:         10 * time.Millisecond,
		StopWhenEmpty: true,
		Grace:         2 * time.Second,
		Abandon:       300 * time.Millisecond,
		MemoryMB:      -1,
	}
}

// logBuffer collects the worker's log for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newTestWorker(t *testing.T, store jobqueue.Store, reg *handlers.Registry, cfg Config, enc *payload.Encrypter) (*Worker, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	var out io.Writer = logs
	cfg.Logger, cfg.Encrypter = zerolog.New(out), enc
	w, err := New(store, reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w, logs
}

// runWorker runs w until it stops by itself, failing the test if it has
// not stopped within limit.
func runWorker(t *testing.T, w *Worker, limit time.Duration) StopReason {
	t.Helper()
	return startWorker(w, limit).wait(t)
}

// workerRun is a worker running in the background. The test goroutine
// collects its result with wait, which fails the test (instead of hanging
// it) when the worker does not stop.
type workerRun struct {
	limit    time.Duration
	done     chan StopReason
	timedOut atomic.Bool
	cancel   context.CancelFunc
}

// startWorker runs w in the background; its context is cancelled after
// limit (a worker that needed that failed its test).
func startWorker(w *Worker, limit time.Duration) *workerRun {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	r := &workerRun{limit: limit, done: make(chan StopReason, 1), cancel: cancel}
	go func() {
		defer cancel()
		reason := w.Run(ctx)
		r.timedOut.Store(errors.Is(ctx.Err(), context.DeadlineExceeded))
		r.done <- reason
	}()
	return r
}

// wait returns the stop reason; called from the test's goroutine only.
func (r *workerRun) wait(t *testing.T) StopReason {
	t.Helper()
	// After the limit, Run still lets jobs finish for Grace and Abandon.
	stuck := time.NewTimer(r.limit + time.Minute)
	defer stuck.Stop()
	select {
	case reason := <-r.done:
		if r.timedOut.Load() {
			t.Fatalf("worker did not stop by itself within %s", r.limit)
		}
		return reason
	case <-stuck.C:
		t.Fatalf("worker still running %s after it was cancelled", time.Minute)
	}
	return ""
}

// stop sends the worker the stop signal (its Run context ends).
func (r *workerRun) stop() { r.cancel() }

// stopped returns the stop reason if the worker has stopped.
func (r *workerRun) stopped() (StopReason, bool) {
	select {
	case reason := <-r.done:
		r.done <- reason
		return reason, true
	default:
		return "", false
	}
}

// push inserts a job built as PHP's createObjectPayload would for class
// with props, and returns its uuid.
func push(t *testing.T, q *database.Queue, queue, class string, props ...phpserialize.Entry) string {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(class, props...), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pushRaw(t, q, queue, raw)
	p, _ := payload.Parse(raw)
	return p.UUID
}

// pushNumbered bulk-pushes n jobs of class, each with a property i = 0..n-1.
func pushNumbered(t *testing.T, q *database.Queue, class string, n int) {
	t.Helper()
	items := make([]jobqueue.PushItem, n)
	for i := range items {
		raw, err := payload.BuildObjectPayload(phpserialize.Object(class, phpserialize.Public("i", phpserialize.Int(int64(i)))), payload.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		items[i] = jobqueue.PushItem{Payload: raw}
	}
	if err := q.PushMany(context.Background(), items); err != nil {
		t.Fatal(err)
	}
}

func pushRaw(t *testing.T, q *database.Queue, queue string, raw []byte) int64 {
	t.Helper()
	id, err := q.Push(context.Background(), jobqueue.PushItem{Queue: queue, Payload: raw})
	if err != nil {
		t.Fatal(err)
	}
	return id.Num
}

type (
	jobRow    = testdb.JobRow
	failedRow = testdb.FailedRow
)

func jobRows(t *testing.T, q *database.Queue) []jobRow       { return testdb.JobRows(t, q) }
func failedRows(t *testing.T, q *database.Queue) []failedRow { return testdb.FailedRows(t, q) }

// exec runs a statement on the queue's database, with '?' placeholders
// rebound for the engine.
func exec(t *testing.T, q *database.Queue, query string, args ...any) {
	t.Helper()
	if _, err := q.DB().Exec(q.Dialect().Rebind(query), args...); err != nil {
		t.Fatal(err)
	}
}

// makeReady moves every delayed row's available_at to now, as if its
// backoff had passed.
func makeReady(t *testing.T, q *database.Queue) {
	t.Helper()
	exec(t, q, fmt.Sprintf("update %s set available_at = ?", q.Config().JobsTable), time.Now().Unix())
}

// counter counts handler runs per job uuid.
type counter struct {
	mu   sync.Mutex
	runs map[string]int
	seq  []string
}

func newCounter() *counter { return &counter{runs: map[string]int{}} }

func (c *counter) add(job *handlers.Job) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs[job.UUID]++
	c.seq = append(c.seq, job.DisplayName)
}

func (c *counter) count(uuid string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[uuid]
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.runs {
		n += v
	}
	return n
}

func within(t *testing.T, what string, got, want, tolerance int64) {
	t.Helper()
	if got < want-tolerance || got > want+tolerance {
		t.Errorf("%s = %d, want %d (±%d)", what, got, want, tolerance)
	}
}

func mustContain(t *testing.T, what, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%s does not contain %q:\n%s", what, p, s)
		}
	}
}

// gate holds handlers until the test opens it. The test's cleanup opens
// it too, so a handler never outlives a test that failed before.
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{ch: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

func (g *gate) wait() { <-g.ch }

// withFakeClock puts cfg's worker on a fake clock starting now, and
// returns it: lease ticks, sleeps, retries and probes then happen when
// the test advances it.
func withFakeClock(cfg *Config) *clock.Fake {
	c := clock.NewFake(time.Now())
	cfg.clock = c
	return c
}

// openAt opens another queue on q's tables whose clock is now: the
// store's view of time (reservations, retry_after) moves with a test's
// fake clock, or runs ahead of the real one.
func openAt(t *testing.T, cfg appconfig.Config, now func() time.Time) *database.Queue {
	t.Helper()
	q, err := database.Open(context.Background(), cfg, database.Options{Clock: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// afterRetryAfter opens a queue on q's tables as a worker that starts
// retry_after (+1 s) from now sees it: reservations taken until now have
// expired, as after a crash.
func afterRetryAfter(t *testing.T, cfg appconfig.Config) *database.Queue {
	t.Helper()
	ahead := time.Duration(cfg.RetryAfter+1) * time.Second
	return openAt(t, cfg, func() time.Time { return time.Now().Add(ahead) })
}
