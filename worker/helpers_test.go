package worker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testdb"
	"github.com/laraworker/laraworker/laravel"
	"github.com/laraworker/laraworker/payload"
	"github.com/laraworker/laraworker/phpserialize"
	"github.com/rs/zerolog"
)

// testOptions run fast: short sleeps, stop when the queues are empty.
func testOptions() Options {
	o := DefaultOptions()
	o.Sleep = 10 * time.Millisecond
	o.StopWhenEmpty = true
	o.Grace = 2 * time.Second
	o.Abandon = 300 * time.Millisecond
	o.MemoryMB = 0
	return o
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

func newTestWorker(t *testing.T, q *laravel.Queue, reg *handlers.Registry, opts Options, enc *payload.Encrypter) (*Worker, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	var out io.Writer = logs
	w, err := New(q, reg, enc, opts, zerolog.New(out), nil)
	if err != nil {
		t.Fatal(err)
	}
	return w, logs
}

// runWorker runs w until it stops by itself, failing after limit.
func runWorker(t *testing.T, w *Worker, limit time.Duration) StopReason {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	reason := w.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("worker did not stop within %s", limit)
	}
	return reason
}

// push inserts a job built as PHP's createObjectPayload would for class
// with props, and returns its uuid.
func push(t *testing.T, q *laravel.Queue, queue, class string, props ...phpserialize.Entry) string {
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
func pushNumbered(t *testing.T, q *laravel.Queue, class string, n int) {
	t.Helper()
	items := make([]laravel.PushItem, n)
	for i := range items {
		raw, err := payload.BuildObjectPayload(phpserialize.Object(class, phpserialize.Public("i", phpserialize.Int(int64(i)))), payload.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		items[i] = laravel.PushItem{Payload: raw}
	}
	if err := q.PushMany(context.Background(), items); err != nil {
		t.Fatal(err)
	}
}

func pushRaw(t *testing.T, q *laravel.Queue, queue string, raw []byte) int64 {
	t.Helper()
	id, err := q.Push(context.Background(), laravel.PushItem{Queue: queue, Payload: raw})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

type (
	jobRow    = testdb.JobRow
	failedRow = testdb.FailedRow
)

func jobRows(t *testing.T, q *laravel.Queue) []jobRow       { return testdb.JobRows(t, q) }
func failedRows(t *testing.T, q *laravel.Queue) []failedRow { return testdb.FailedRows(t, q) }

// exec runs a statement on the queue's database, with '?' placeholders
// rebound for the engine.
func exec(t *testing.T, q *laravel.Queue, query string, args ...any) {
	t.Helper()
	if _, err := q.DB().Exec(q.Dialect().Rebind(query), args...); err != nil {
		t.Fatal(err)
	}
}

// makeReady moves every delayed row's available_at to now, as if its
// backoff had passed.
func makeReady(t *testing.T, q *laravel.Queue) {
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
