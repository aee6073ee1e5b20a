package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkDrain is the worker's whole path per job (claim, payload parse,
// command decode, noop handler, grouped delete) on each engine: b.N jobs
// pushed in bulk (untimed), then drained by one worker that stops when the
// queue is empty. It reports jobs/s and the worker process's CPU per
// 1,000 jobs (user + system, from getrusage). Profile it with
//
//	go test ./worker -run '^$' -bench 'Drain/mysql/c128' -cpuprofile cpu.out -memprofile mem.out
func BenchmarkDrain(b *testing.B) {
	for _, engine := range testdb.Engines {
		b.Run(engine, func(b *testing.B) {
			q := testdb.Open(b, testdb.Config(b, engine))
			for _, mode := range []struct {
				name        string
				concurrency int
				exact       bool
			}{{"c1", 1, false}, {"c16", 16, false}, {"c128", 128, false}, {"exact", 1, true}} {
				b.Run(mode.name, func(b *testing.B) {
					opts := Config{Sleep: -1, StopWhenEmpty: true, MemoryMB: -1}
					opts.Concurrency, opts.LaravelExact = mode.concurrency, mode.exact
					benchDrain(b, q, opts)
				})
			}
		})
	}
}

const benchClass = `App\Jobs\BenchNoopJob`

func benchDrain(b *testing.B, q *database.Queue, opts Config) {
	raw, err := payload.BuildObjectPayload(payload.NewCommand(benchClass, nil, payload.Dispatch{}), payload.BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	items := make([]jobqueue.PushItem, b.N)
	for i := range items {
		items[i] = jobqueue.PushItem{Payload: raw}
	}
	ctx := context.Background()
	if err := q.PushMany(ctx, items); err != nil {
		b.Fatal(err)
	}
	reg := handlers.NewRegistry()
	reg.Handle(benchClass, handlers.Noop())
	store := &deleteCounter{Store: q}
	opts.Batches = q // as the worker on q itself would
	w, err := New(store, reg, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), processCPU()
	runCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	w.Run(runCtx)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
	// The worker's own CPU (the database servers run in other processes):
	// the cost per job the issue compares with River's.
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N)*1000, "cpu-ms/1kjobs")
	b.ReportMetric(float64(store.calls.Load())/float64(b.N)*1000, "deletes/1kjobs")
	b.ReportMetric(float64(store.claims.Load())/float64(b.N)*1000, "claims/1kjobs")
	if got := w.Claimed(); got != int64(b.N) {
		b.Fatalf("processed %d jobs, want %d", got, b.N)
	}
}

// deleteCounter counts the store's Delete calls: the grouped deletes the
// completer wrote.
type deleteCounter struct {
	jobqueue.Store
	calls, rows atomic.Int64
	claims      atomic.Int64 // Claim calls that returned jobs
}

func (d *deleteCounter) Claim(ctx context.Context, queues []string, n int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	jobs, err := d.Store.Claim(ctx, queues, n, opts)
	if len(jobs) > 0 {
		d.claims.Add(1)
	}
	return jobs, err
}

func (d *deleteCounter) Delete(ctx context.Context, jobs []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	d.calls.Add(1)
	d.rows.Add(int64(len(jobs)))
	return d.Store.Delete(ctx, jobs)
}

// BenchmarkNoopPath is the worker's own CPU per job, without a database:
// an in-memory store hands out b.N claimed no-op jobs and takes their
// deletes. What it measures is everything the worker does around a
// handler (payload parse, command decode, slots, contexts, outcome,
// grouped delete), which the database benchmarks bury in round-trip
// noise.
//
// The "-joblog" variants log as `laraworker work` does by default: a JSON
// line per job (info level) written unbuffered to a file, as stderr is.
// The "-hooked" variant's payload carries what PHP's hooks add (a W3C
// traceparent, Sentry's keys; no Context, which the log line would
// render), with tracing off: it must cost what the plain one does. The
// "-traced" variant traces every job (an SDK provider that records the
// spans and exports them nowhere).
func BenchmarkNoopPath(b *testing.B) {
	for _, mode := range []struct {
		c              int
		joblog         bool
		hooked, traced bool
		memory         bool
	}{{1, false, false, false, false}, {16, false, false, false, false}, {128, false, false, false, false}, {16, true, false, false, false},
		{16, false, true, false, false}, {16, false, true, true, false}, {1, false, false, false, true}} {
		name := fmt.Sprintf("c%d", mode.c)
		switch {
		case mode.memory:
			name += "-memory"
		case mode.joblog:
			name += "-joblog"
		case mode.traced:
			name += "-traced"
		case mode.hooked:
			name += "-hooked"
		}
		c := mode.c
		b.Run(name, func(b *testing.B) {
			build := payload.BuildOptions{}
			if mode.hooked {
				build.Carried = payload.Carried{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
					Sentry: &payload.SentryTrace{TraceParent: "771a43a4192642f0b136d5159a501700-b4d0a6e1b3a2c1f0-1", Baggage: "sentry-sample_rate=1", PublishTime: time.Now()}}
			}
			raw, err := payload.BuildObjectPayload(payload.NewCommand(benchClass, nil, payload.Dispatch{}), build)
			if err != nil {
				b.Fatal(err)
			}
			store := &memStore{payload: raw, left: b.N}
			reg := handlers.NewRegistry()
			reg.Handle(benchClass, handlers.Noop())
			cfg := Config{Sleep: -1, StopWhenEmpty: true, MemoryMB: -1, Concurrency: c}
			if mode.memory {
				cfg.MemoryMB = 0 // --memory's default, as `laraworker work` runs
			}
			if mode.traced {
				tp := sdktrace.NewTracerProvider()
				defer tp.Shutdown(context.Background())
				cfg.TracerProvider = tp
			}
			if mode.joblog {
				f, err := os.Create(filepath.Join(b.TempDir(), "worker.log"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				cfg.Logger = zerolog.New(f).Level(zerolog.InfoLevel).With().Timestamp().Logger()
			}
			w, err := New(store, reg, cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			w.Run(context.Background())
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N)*1000, "cpu-ms/1kjobs")
			if got := store.deleted.Load(); got != int64(b.N) {
				b.Fatalf("deleted %d jobs, want %d", got, b.N)
			}
		})
	}
}

// memStore is a queue of identical no-op jobs held in memory. It
// implements what a worker calls (the worker's side, and a store that
// shares no state with PHP); the rest of the contract is left to the nil
// Store it embeds.
type memStore struct {
	jobqueue.Store
	payload []byte
	mu      sync.Mutex
	left    int
	nextID  int64
	deleted atomic.Int64
}

func (m *memStore) Claim(_ context.Context, _ []string, n int, _ jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n = min(n, m.left)
	m.left -= n
	now := time.Now().Unix()
	rows := make([]jobqueue.JobRow, n)
	for i := range rows {
		m.nextID++
		rows[i] = jobqueue.JobRow{ID: m.nextID, Queue: "default", Payload: m.payload, Attempts: 1, ReservedAt: &now, AvailableAt: now, CreatedAt: now}
	}
	return rows, nil
}

func (m *memStore) CountClaimable(context.Context, []string, jobqueue.ClaimOptions) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(m.left), nil
}

func (m *memStore) Delete(_ context.Context, jobs []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	m.deleted.Add(int64(len(jobs)))
	return nil, nil
}

func (m *memStore) Finish(context.Context, jobqueue.JobRow, jobqueue.Followup) error { return nil }
func (m *memStore) Release(context.Context, jobqueue.JobRow, time.Duration) error    { return nil }
func (m *memStore) Fail(context.Context, jobqueue.JobRow, string, string, jobqueue.Followup) error {
	return nil
}
func (m *memStore) Unreserve(context.Context, jobqueue.JobRow) error { return nil }
func (m *memStore) Extend(_ context.Context, jobs []jobqueue.JobRow) ([]jobqueue.JobRow, error) {
	return jobs, nil
}
func (m *memStore) Connection() string        { return "database" }
func (m *memStore) DefaultQueue() string      { return "default" }
func (m *memStore) RetryAfter() time.Duration { return 90 * time.Second }
func (m *memStore) HooksQueue() (string, string, bool) {
	return "", "", false
}
func (m *memStore) TraceDestination(queue string) (string, string) { return "", queue }
func (m *memStore) SharedCache() jobqueue.Cache                    { return nil }
func (m *memStore) LockStores() map[string]jobqueue.LockStore      { return nil }
func (m *memStore) DefaultCacheStore() string                      { return "" }
func (m *memStore) StateStores() map[string]jobqueue.StateStore    { return nil }
func (m *memStore) DurationLimiters() map[string]jobqueue.DurationLimiter {
	return nil
}
