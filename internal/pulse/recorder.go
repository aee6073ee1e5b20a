package pulse

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
)

// Ingest takes the recorder's batches: Pulse's tables (Storage) or its
// Redis stream (Stream).
type Ingest interface {
	// Ingest writes one batch, all of it or none (a transaction, a
	// pipeline).
	Ingest(ctx context.Context, entries []Entry) error
	// Trim deletes what Pulse keeps no longer, as its trim does.
	Trim(ctx context.Context) error
}

// Options are a Recorder's settings beyond Pulse's configuration.
type Options struct {
	Logger zerolog.Logger
	// Clock times the batches and the runs (tests: a fake clock). Default
	// the system's.
	Clock clock.Clock
	// FlushEvery is how often buffered entries are ingested. Default 1s.
	FlushEvery time.Duration
	// Random draws Pulse's lotteries (slow jobs' sampling, the trim), in
	// [0, 1). Default math/rand.
	Random func() float64
	// DefaultQueue is the queue connection's default queue
	// (queue.connections.<name>.queue; "default" when empty): where a job
	// pushed without a queue goes, as JobQueued's key names it.
	DefaultQueue string
}

// flushTimeout bounds one batch's write.
const flushTimeout = 10 * time.Second

// Recorder is a worker.JobObserver that records Pulse's entries for the
// jobs a worker runs, buffers them and ingests them in batches (Run).
type Recorder struct {
	s      Settings
	ingest Ingest
	log    zerolog.Logger
	clock  clock.Clock
	every  time.Duration
	random func() float64
	// defaultQueue: Options.DefaultQueue.
	defaultQueue string

	mu  sync.Mutex
	buf []Entry
	// full asks Run for a batch now: the buffer passed Settings.Buffer.
	full chan struct{}

	recorded, dropped atomic.Int64
}

// New makes a recorder writing to ingest.
func New(s Settings, ingest Ingest, opts Options) *Recorder {
	if opts.Clock == nil {
		opts.Clock = clock.System(nil)
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = time.Second
	}
	if opts.Random == nil {
		opts.Random = rand.Float64
	}
	return &Recorder{s: s, ingest: ingest, log: opts.Logger, clock: opts.Clock, every: opts.FlushEvery, random: opts.Random,
		defaultQueue: orDefault(opts.DefaultQueue, "default"), full: make(chan struct{}, 1)}
}

var _ worker.JobObserver = (*Recorder)(nil)

// JobStarted records nothing: Pulse's JobProcessing entries are made
// when the run ends, with the start's time (PHP ingests them after the
// job too, on the worker's next loop).
func (r *Recorder) JobStarted(ctx context.Context, _ worker.JobInfo) context.Context { return ctx }

// JobEnded records the run's entries.
func (r *Recorder) JobEnded(_ context.Context, job worker.JobInfo, end worker.JobEnd) {
	if job.Payload == nil || !end.Events.Processing {
		return // not a job PHP's events would name, or not Go's to run
	}
	entries := r.queueEntries(nil, job, end)
	entries = r.queuedEntries(entries, job, end)
	entries = r.slowJob(entries, job, end)
	r.add(entries)
}

// queuedEntries are the Queues recorder's counts of JobQueued for the
// jobs the run pushed (the next link of a chain), each sampled on its own
// uuid and named by its own displayName, on the queue it went to.
func (r *Recorder) queuedEntries(entries []Entry, job worker.JobInfo, end worker.JobEnd) []Entry {
	q := r.s.Queues
	if q == nil || !end.Written {
		return entries // a write that did not land pushed nothing
	}
	for _, pushed := range end.Queued {
		if sampleValue(pushed.Payload.UUID) > q.SampleRate || q.ignored(pushed.Payload.Name()) {
			continue
		}
		key := job.Connection + ":" + orDefault(pushed.Queue, r.defaultQueue)
		entries = append(entries, Entry{Timestamp: end.Ended.Unix(), Type: "queued", Key: key, Aggregations: countOnly, OnlyBuckets: true})
	}
	return entries
}

// queueEntries are the Queues recorder's counts, one per event the run
// raised, kept or dropped with the job's uuid as Pulse samples.
func (r *Recorder) queueEntries(entries []Entry, job worker.JobInfo, end worker.JobEnd) []Entry {
	q := r.s.Queues
	if q == nil || sampleValue(job.UUID()) > q.SampleRate || q.ignored(job.Name()) {
		return entries
	}
	key := job.Connection + ":" + job.Queue
	count := func(typ string, at time.Time) {
		entries = append(entries, Entry{Timestamp: at.Unix(), Type: typ, Key: key, Aggregations: countOnly, OnlyBuckets: true})
	}
	count("processing", job.Started)
	ev := end.Events
	if ev.Failed {
		count("failed", end.Ended)
	}
	if ev.Processed {
		count("processed", end.Ended)
	}
	if ev.ReleasedAfterException {
		count("released", end.Ended)
	}
	return entries
}

// slowJob is the Slow Jobs recorder's entry for a run that took at least
// its threshold: the run from JobProcessing to the first event after it.
func (r *Recorder) slowJob(entries []Entry, job worker.JobInfo, end worker.JobEnd) []Entry {
	sj := r.s.SlowJobs
	ev := end.Events
	if sj == nil || !(ev.Processed || ev.ReleasedAfterException || ev.Failed) {
		return entries
	}
	name := job.Name()
	ms := end.Ended.UnixMilli() - job.Started.UnixMilli()
	if r.random() > sj.SampleRate || sj.ignored(name) || time.Duration(ms)*time.Millisecond < sj.threshold(name) {
		return entries
	}
	return append(entries, Entry{Timestamp: end.Ended.Unix(), Type: "slow_job", Key: name, Value: &ms, Aggregations: maxAndCount})
}

// The recorders' aggregations, shared by their entries (never modified).
var (
	countOnly   = []string{aggCount}
	maxAndCount = []string{aggMax, aggCount}
)

// maxBuffered bounds the buffer while an ingest is slow: past it, new
// entries are dropped (and counted) rather than held without limit.
func (r *Recorder) maxBuffered() int { return max(10*r.s.Buffer, 10000) }

// add buffers entries, asking for a batch once the buffer passes
// pulse.ingest.buffer.
func (r *Recorder) add(entries []Entry) {
	if len(entries) == 0 {
		return
	}
	r.mu.Lock()
	room := r.maxBuffered() - len(r.buf)
	kept := entries[:min(len(entries), max(room, 0))]
	r.buf = append(r.buf, kept...)
	over := len(r.buf) > r.s.Buffer
	r.mu.Unlock()
	if lost := len(entries) - len(kept); lost > 0 {
		r.dropped.Add(int64(lost))
	}
	if over {
		select {
		case r.full <- struct{}{}:
		default:
		}
	}
}

// take empties the buffer.
func (r *Recorder) take() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	batch := r.buf
	r.buf = nil
	return batch
}

// Run ingests the buffer every FlushEvery, and at once when it is full,
// until ctx ends; then it ingests what is left. A batch's write is not
// cut short by ctx's end (its entries would be lost); each gets
// flushTimeout.
func (r *Recorder) Run(ctx context.Context) {
	t := r.clock.NewTicker(r.every)
	defer t.Stop()
	for {
		stopping := false
		select {
		case <-ctx.Done():
			stopping = true
		case <-t.C():
		case <-r.full:
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		r.Flush(wctx)
		cancel()
		if stopping {
			return
		}
	}
}

// Flush ingests the buffered entries as one batch, then trims when
// Pulse's trim lottery says so. A batch that cannot be written is
// dropped and logged, as Pulse drops what its ingest cannot take.
func (r *Recorder) Flush(ctx context.Context) {
	batch := r.take()
	if len(batch) == 0 {
		return
	}
	if err := r.ingest.Ingest(ctx, batch); err != nil {
		r.dropped.Add(int64(len(batch)))
		r.log.Warn().Err(err).Int("entries", len(batch)).Msg("pulse: entries of the jobs this worker ran could not be recorded; Pulse's Queues and Slow Jobs cards miss them")
	} else {
		r.recorded.Add(int64(len(batch)))
	}
	// Lottery::odds(chances, outOf): random_int(1, outOf) <= chances.
	if int(r.random()*float64(r.s.TrimOutOf))+1 <= r.s.TrimChances {
		if err := r.ingest.Trim(ctx); err != nil {
			r.log.Warn().Err(err).Msg("pulse: trimming Pulse's storage failed")
		}
	}
}

// Recorded and Dropped count the entries ingested, and those lost (an
// ingest that failed, a buffer that overflowed).
func (r *Recorder) Recorded() int64 { return r.recorded.Load() }
func (r *Recorder) Dropped() int64  { return r.dropped.Load() }
