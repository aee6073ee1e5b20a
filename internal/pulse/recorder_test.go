package pulse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/pulse/pulsetest"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
)

// run is one run of a job as the worker reported it.
type run struct {
	info worker.JobInfo
	end  worker.JobEnd
}

// runs captures every run (a second observer beside the recorder).
type runs struct {
	mu  sync.Mutex
	all []run
}

func (r *runs) JobStarted(ctx context.Context, _ worker.JobInfo) context.Context { return ctx }
func (r *runs) JobEnded(_ context.Context, job worker.JobInfo, end worker.JobEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, run{job, end})
}

// testSettings: the Queues recorder samples half the jobs and ignores
// App\Jobs\Internal\*; the Slow Jobs recorder takes runs of 100 ms or more,
// and every run of App\Jobs\Broken (a pattern's threshold of 0).
func testSettings(t *testing.T) Settings {
	t.Helper()
	ignore, err := compilePHPRegexp(`/^App\\Jobs\\Internal\\/`)
	if err != nil {
		t.Fatal(err)
	}
	broken, err := compilePHPRegexp(`/Broken$/`)
	if err != nil {
		t.Fatal(err)
	}
	return Settings{
		Queues:   &Sampled{SampleRate: 0.5, Ignore: []phpRegexp{ignore}},
		SlowJobs: &SlowJobs{Sampled: Sampled{SampleRate: 1}, Threshold: 100 * time.Millisecond, Patterns: []patternThreshold{{re: broken}}},
		Buffer:   5000, TrimOutOf: 1000, Chunk: 1000, StorageKeep: 7 * 24 * time.Hour,
	}
}

// pulseJobs are the jobs each test runs, by class: how many, and what the
// handler does.
var pulseJobs = []struct {
	class string
	n     int
	props []phpserialize.Entry
}{
	{`App\Jobs\Quick`, 16, nil},
	{`App\Jobs\Slow`, 2, nil},
	{`App\Jobs\Flaky`, 1, []phpserialize.Entry{phpserialize.Public("tries", phpserialize.Int(2))}},
	{`App\Jobs\Broken`, 1, nil},
	{`App\Jobs\GivesUp`, 1, nil},
	{`App\Jobs\Later`, 1, nil},
	{`App\Jobs\Internal\Ping`, 2, nil},
}

func pulseHandlers() *handlers.Registry {
	reg := handlers.NewRegistry()
	var flaky sync.Once
	for _, j := range pulseJobs {
		reg.HandleFunc(j.class, func(ctx context.Context, job *handlers.Job) error {
			switch job.DisplayName {
			case `App\Jobs\Slow`:
				time.Sleep(150 * time.Millisecond)
			case `App\Jobs\Flaky`:
				failed := false
				flaky.Do(func() { failed = true })
				if failed {
					return errors.New("first try fails")
				}
			case `App\Jobs\Broken`:
				return errors.New("broken")
			case `App\Jobs\GivesUp`:
				job.Fail(errors.New("given up"))
			case `App\Jobs\Later`:
				job.Release(time.Hour)
			}
			return nil
		})
	}
	return reg
}

// runJobs pushes pulseJobs on queue "pulse" and runs a worker with the
// recorder until the queue is empty, then stops the recorder (its last
// batch ingested). It returns every run.
func runJobs(t *testing.T, q *database.Queue, rec *Recorder) []run {
	t.Helper()
	for _, j := range pulseJobs {
		for i := range j.n {
			// Every class has a run PHP's sample keeps, Quick one it drops
			// too: each event is seen in the counts, whatever the draw.
			raw, err := payload.BuildObjectPayload(phpserialize.Object(j.class, j.props...), payload.BuildOptions{UUID: sampledUUID(t, i%2 == 0)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := q.Push(context.Background(), jobqueue.PushItem{Queue: "pulse", Payload: raw}); err != nil {
				t.Fatal(err)
			}
		}
	}
	seen := &runs{}
	w, err := worker.New(q, pulseHandlers(), worker.Config{Queues: []string{"pulse"}, Sleep: 10 * time.Millisecond, StopWhenEmpty: true,
		MemoryMB: -1, Concurrency: 4, Observers: []worker.JobObserver{rec, seen}, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rec.Run(ctx); close(done) }()
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	if reason := w.Run(wctx); reason != worker.StopEmpty {
		t.Fatalf("worker stopped: %s", reason)
	}
	cancel()
	<-done
	return seen.all
}

// sampledUUID is a uuid that Pulse's Queues sampling at 0.5 keeps, or
// drops (the test asks PHP whether it does, in phpSampled).
func sampledUUID(t *testing.T, kept bool) string {
	for {
		if u := uuid4(t); (sampleValue(u) <= 0.5) == kept {
			return u
		}
	}
}

// phpSampled asks PHP which uuids Pulse's Queues recorder keeps at rate.
func phpSampled(t *testing.T, all []run, rate string) map[string]bool {
	t.Helper()
	var uuids []string
	for _, r := range all {
		uuids = append(uuids, r.info.UUID())
	}
	out := runPHP(t, readLines+` foreach ($lines as $u) { echo hexdec(md5($u)) / pow(16, 32) <= `+rate+` ? "1" : "0", "\n"; }`, uuids)
	kept := map[string]bool{}
	for i, u := range uuids {
		kept[u] = out[i] == "1"
	}
	return kept
}

// expected are the entries PHP's recorders would write for the runs,
// by the rules of laravel-observability.md §5.1-5.2: per run whose uuid
// PHP samples and whose name is not ignored, a count of processing at the
// start and of each event at the end on "connection:queue"; per run that
// raised an end event and took at least its threshold, a slow_job entry
// with its ms.
func expected(all []run, sampled map[string]bool) []Entry {
	var out []Entry
	for _, r := range all {
		ev, name := r.end.Events, r.info.Name()
		if !ev.Processing {
			continue
		}
		key := r.info.Connection + ":" + r.info.Queue
		if sampled[r.info.UUID()] && !strings.HasPrefix(name, `App\Jobs\Internal\`) {
			add := func(typ string, at time.Time) {
				out = append(out, Entry{Timestamp: at.Unix(), Type: typ, Key: key, Aggregations: []string{"count"}, OnlyBuckets: true})
			}
			add("processing", r.info.Started)
			for typ, raised := range map[string]bool{"failed": ev.Failed, "processed": ev.Processed, "released": ev.ReleasedAfterException} {
				if raised {
					add(typ, r.end.Ended)
				}
			}
		}
		ms := r.end.Ended.UnixMilli() - r.info.Started.UnixMilli()
		if (ev.Processed || ev.Failed || ev.ReleasedAfterException) && (ms >= 100 || name == `App\Jobs\Broken`) {
			out = append(out, Entry{Timestamp: r.end.Ended.Unix(), Type: "slow_job", Key: name, Value: &ms, Aggregations: []string{"max", "count"}})
		}
	}
	return out
}

// expectedAggregates are the pulse_aggregates rows of entries, computed
// as §5.4 says: per aggregation and period, bucket = floor(ts / period) *
// period; counts add up, max keeps the greatest.
func expectedAggregates(entries []Entry) []pulsetest.Aggregate {
	type k struct {
		bucket, period int64
		typ, key, agg  string
	}
	values := map[k]int64{}
	for _, e := range entries {
		for _, p := range []int64{60, 360, 1440, 10080} {
			for _, agg := range e.Aggregations {
				key := k{e.Timestamp / p * p, p, e.Type, e.Key, agg}
				if agg == "count" {
					values[key]++
				} else if _, ok := values[key]; !ok || *e.Value > values[key] {
					values[key] = *e.Value
				}
			}
		}
	}
	var out []pulsetest.Aggregate
	for key, v := range values {
		out = append(out, pulsetest.Aggregate{Bucket: key.bucket, Period: key.period, Type: key.typ, Key: key.key, Aggregate: key.agg,
			Value: fmt.Sprint(v), KeyHash: hexMD5(key.key)})
	}
	sortAggregates(out)
	return out
}

func sortAggregates(a []pulsetest.Aggregate) {
	slices.SortFunc(a, func(x, y pulsetest.Aggregate) int {
		return strings.Compare(fmt.Sprint(x.Period, x.Bucket, x.Type, x.Aggregate, x.Key), fmt.Sprint(y.Period, y.Bucket, y.Type, y.Aggregate, y.Key))
	})
}

// TestRecorderWritesWhatPulseWould: the jobs a Go worker runs, releases
// and fails land in Pulse's tables as PHP's Queues and Slow Jobs recorders
// would write them for the same runs: the counts Pulse's Queues card
// graphs (only for the uuids PHP's sampling keeps, never for an ignored
// name), the slow jobs with their entries, on each engine.
func TestRecorderWritesWhatPulseWould(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		q, db, cfg := pulseDB(t, engine)
		store, err := NewStorage(context.Background(), cfg, db, testSettings(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := New(testSettings(t), store, Options{FlushEvery: 50 * time.Millisecond, Logger: zerolog.New(zerolog.NewTestWriter(t))})
		all := runJobs(t, q, rec)
		if rec.Dropped() != 0 {
			t.Fatalf("%d entries dropped", rec.Dropped())
		}
		sampled := phpSampled(t, all, "0.5")
		want := expected(all, sampled)
		checkBothSides(t, all, sampled)
		got := pulsetest.Aggregates(t, db, engine, cfg.TablePrefix)
		sortAggregates(got)
		if wantAggs := expectedAggregates(want); !slices.Equal(got, wantAggs) {
			t.Errorf("pulse_aggregates:\n%s\nwant (PHP's recorders for the same runs):\n%s", dump(got), dump(wantAggs))
		}
		checkSlowEntries(t, pulsetest.Entries(t, db, engine, cfg.TablePrefix), want)
		checkCardTotals(t, got, all, sampled)
	})
}

// checkBothSides: the sample kept some runs and dropped others, so the
// test tells PHP's sampling from keeping or dropping everything.
func checkBothSides(t *testing.T, all []run, sampled map[string]bool) {
	t.Helper()
	kept := 0
	for _, r := range all {
		if sampled[r.info.UUID()] {
			kept++
		}
	}
	if kept == 0 || kept == len(all) {
		t.Fatalf("PHP's sample kept %d of %d runs: the test needs both kinds", kept, len(all))
	}
}

// checkSlowEntries: one pulse_entries row per slow run, with its ms.
func checkSlowEntries(t *testing.T, got []pulsetest.Entry, want []Entry) {
	t.Helper()
	var w []string
	for _, e := range want {
		if e.Type == "slow_job" {
			w = append(w, fmt.Sprintf("%d %s %d %s", e.Timestamp, e.Key, *e.Value, hexMD5(e.Key)))
		}
	}
	var g []string
	for _, e := range got {
		g = append(g, fmt.Sprintf("%d %s %d %s", e.Timestamp, e.Key, e.Value.Int64, e.KeyHash))
	}
	slices.Sort(w)
	slices.Sort(g)
	if !slices.Equal(g, w) || len(w) < 3 {
		t.Errorf("pulse_entries %v, want the slow runs %v (two Slow, one Broken at least)", g, w)
	}
}

// checkCardTotals: what Pulse's Queues card sums for the hour (period 60)
// equals the events of the sampled runs, counted without any bucket
// arithmetic.
func checkCardTotals(t *testing.T, got []pulsetest.Aggregate, all []run, sampled map[string]bool) {
	t.Helper()
	want := map[string]int{}
	for _, r := range all {
		if !sampled[r.info.UUID()] || strings.Contains(r.info.Name(), `\Internal\`) || !r.end.Events.Processing {
			continue
		}
		want["processing"]++
		ev := r.end.Events
		for typ, raised := range map[string]bool{"processed": ev.Processed, "released": ev.ReleasedAfterException, "failed": ev.Failed} {
			if raised {
				want[typ]++
			}
		}
	}
	have := map[string]int{}
	for _, a := range got {
		if a.Period == 60 && a.Key == "database:pulse" && a.Aggregate == "count" {
			var n int
			fmt.Sscan(a.Value, &n)
			have[a.Type] += n
		}
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Errorf("the Queues card's hour: %v, want %v", have, want)
	}
}

// TestRecorderCountsChainLinksQueued: the next link of a chain that Go
// pushes is counted as queued (PHP's dispatch raises JobQueued for it) on
// the queue it goes to; a job pushed without a queue counts on the
// connection's default queue.
func TestRecorderCountsChainLinksQueued(t *testing.T) {
	q, db, cfg := pulseDB(t, "sqlite")
	chain, err := os.ReadFile(filepath.Join("..", "..", "testdata", "payloads", "chain.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Push(context.Background(), jobqueue.PushItem{Queue: "chains", Payload: chain}); err != nil {
		t.Fatal(err)
	}
	s := Settings{Queues: &Sampled{SampleRate: 1}, Buffer: 5000, TrimOutOf: 1000, Chunk: 1000, StorageKeep: time.Hour}
	store, err := NewStorage(context.Background(), cfg, db, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := New(s, store, Options{DefaultQueue: "default"})
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\ChainLinkJob`, func(context.Context, *handlers.Job) error { return nil })
	w, err := worker.New(q, reg, worker.Config{Queues: []string{"chains"}, Sleep: 10 * time.Millisecond, StopWhenEmpty: true, MemoryMB: -1,
		Observers: []worker.JobObserver{rec}, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	w.Run(context.Background())
	rec.Flush(context.Background())
	counts := map[string]string{}
	for _, a := range pulsetest.Aggregates(t, db, "sqlite", cfg.TablePrefix) {
		if a.Period == 60 {
			counts[a.Type+" "+a.Key] = a.Value
		}
	}
	if want := map[string]string{"processing database:chains": "3", "processed database:chains": "3", "queued database:chains": "2"}; fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("the hour's counts %v, want %v", counts, want)
	}
}
