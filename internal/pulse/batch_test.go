package pulse

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/internal/pulse/pulsetest"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
)

// notifying passes batches to a real Storage and says when each landed.
type notifying struct {
	*Storage
	batches chan int
}

func (n notifying) Ingest(ctx context.Context, entries []Entry) error {
	err := n.Storage.Ingest(ctx, entries)
	n.batches <- len(entries)
	return err
}

// endRun tells the recorder about one successful run of a job.
func endRun(rec *Recorder, uuid string, at time.Time) {
	info := worker.JobInfo{Connection: "database", Queue: "default", Attempt: 1, Payload: &payload.Payload{UUID: uuid, DisplayName: `App\Jobs\Quick`}, Started: at}
	rec.JobEnded(context.Background(), info, worker.JobEnd{Ended: at, Outcome: jobqueue.OutcomeDone, Events: worker.JobEvents{Processing: true, Processed: true}, Written: true})
}

// TestRecorderBatches: entries are ingested in batches, when the flush
// interval passes on the recorder's clock, at once when the buffer passes
// pulse.ingest.buffer, and the rest when the recorder stops; never one
// write per job.
func TestRecorderBatches(t *testing.T) {
	_, db, cfg := pulseDB(t, "sqlite")
	store, err := NewStorage(context.Background(), cfg, db, Settings{Chunk: 1000, StorageKeep: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := notifying{store, make(chan int, 10)}
	fake := clock.NewFake(time.Now())
	s := Settings{Queues: &Sampled{SampleRate: 1}, Buffer: 5, TrimOutOf: 1000}
	rec := New(s, in, Options{Clock: fake, FlushEvery: time.Minute, Random: func() float64 { return 0.5 }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rec.Run(ctx); close(done) }()
	testwait.Until(t, 10*time.Second, "Run's ticker", func() bool { return fake.Waiters() > 0 })
	now := time.Now()
	endRun(rec, "a", now) // two entries: processing, processed
	fake.Advance(time.Minute)
	if n := testwait.Recv(t, in.batches, 10*time.Second, "the interval's batch"); n != 2 {
		t.Errorf("the interval's batch had %d entries, want 2", n)
	}
	for _, u := range []string{"b", "c", "d"} { // 6 entries > buffer 5
		endRun(rec, u, now)
	}
	if n := testwait.Recv(t, in.batches, 10*time.Second, "the full buffer's batch"); n != 6 {
		t.Errorf("the full buffer's batch had %d entries, want 6", n)
	}
	endRun(rec, "e", now)
	cancel()
	<-done
	if n := testwait.Recv(t, in.batches, 10*time.Second, "the last batch"); n != 2 {
		t.Errorf("the last batch had %d entries, want 2", n)
	}
	var total int
	for _, a := range pulsetest.Aggregates(t, db, "sqlite", cfg.TablePrefix) {
		if a.Period == 60 && a.Type == "processed" {
			total++
		}
	}
	if total != 1 || rec.Recorded() != 10 || rec.Dropped() != 0 {
		t.Errorf("processed rows of the hour %d, recorded %d, dropped %d; want 1 row (5 runs in one bucket), 10, 0", total, rec.Recorded(), rec.Dropped())
	}
}

// logSink collects log lines.
type logSink struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRecorderDropsWhatItCannotWrite: a batch the database refuses (here
// Pulse's tables are missing) is dropped, counted and logged with the
// cause, as Pulse drops what its ingest cannot take; the next batch is
// tried all the same.
func TestRecorderDropsWhatItCannotWrite(t *testing.T) {
	_, db, cfg := pulseDB(t, "sqlite")
	cfg.TablePrefix = "missing_"
	store, err := NewStorage(context.Background(), cfg, db, Settings{Chunk: 1000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logSink{}
	rec := New(Settings{Queues: &Sampled{SampleRate: 1}, Buffer: 100, TrimOutOf: 1000}, store, Options{Logger: zerolog.New(logs)})
	endRun(rec, "a", time.Now())
	rec.Flush(context.Background())
	endRun(rec, "b", time.Now())
	rec.Flush(context.Background())
	if rec.Dropped() != 4 || rec.Recorded() != 0 {
		t.Errorf("dropped %d, recorded %d: want 4 dropped (two batches tried)", rec.Dropped(), rec.Recorded())
	}
	if l := logs.String(); !strings.Contains(l, "missing_pulse_aggregates") || !strings.Contains(l, "could not be recorded") {
		t.Errorf("log %s: want the cause (the missing table) and what is lost", l)
	}
}
