package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// observed records what an observer is told, per job uuid.
type observed struct {
	mu      sync.Mutex
	started map[string]JobInfo
	ended   map[string][]JobEnd
}

type observedKey struct{}

func (o *observed) JobStarted(ctx context.Context, job JobInfo) context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started[job.UUID()] = job
	return context.WithValue(ctx, observedKey{}, job.UUID())
}

func (o *observed) JobEnded(ctx context.Context, job JobInfo, end JobEnd) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ctx.Value(observedKey{}) != job.UUID() {
		end.Reason += " (JobEnded without JobStarted's context)"
	}
	o.ended[job.UUID()] = append(o.ended[job.UUID()], end)
}

// TestObserverSeesLaravelsEvents: for each way a run ends, observers are
// told the events Laravel's Worker::process raises for it (JobProcessed
// when fire() returned, JobReleasedAfterException for a release by the
// exception rules, JobFailed), with the connection, queue, name and
// attempt, and the context JobStarted returned reaches the handler and
// JobEnded.
func TestObserverSeesLaravelsEvents(t *testing.T) {
	released := observedEnd{jobqueue.OutcomeReleased, "released_after_exception", JobEvents{Processing: true, ReleasedAfterException: true}}
	thrown := observedEnd{jobqueue.OutcomeFailed, "failed", JobEvents{Processing: true, Failed: true}}
	cases := []struct {
		class string
		props []phpserialize.Entry
		want  []observedEnd // one per attempt
	}{
		{`App\Jobs\Succeeds`, nil, []observedEnd{{jobqueue.OutcomeDone, "done", JobEvents{Processing: true, Processed: true}}}},
		{`App\Jobs\ReleasesItself`, nil, []observedEnd{{jobqueue.OutcomeReleased, "released", JobEvents{Processing: true, Processed: true}}}},
		{`App\Jobs\FailsItself`, nil, []observedEnd{{jobqueue.OutcomeFailed, "failed", JobEvents{Processing: true, Processed: true, Failed: true}}}},
		// Released with no backoff, it runs again at once.
		{`App\Jobs\Throws`, []phpserialize.Entry{phpserialize.Public("tries", phpserialize.Int(3))}, []observedEnd{released, released, thrown}},
		{`App\Jobs\ThrowsLastTry`, nil, []observedEnd{thrown}},
	}
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		obs := &observed{started: map[string]JobInfo{}, ended: map[string][]JobEnd{}}
		reg := handlers.NewRegistry()
		uuids := map[string]string{}
		for _, c := range cases {
			uuids[c.class] = push(t, q, "observed", c.class, c.props...)
			reg.HandleFunc(c.class, func(ctx context.Context, job *handlers.Job) error {
				if ctx.Value(observedKey{}) != job.UUID {
					return errors.New("the handler's context is not the one JobStarted returned")
				}
				switch job.DisplayName {
				case `App\Jobs\ReleasesItself`:
					job.Release(time.Minute)
				case `App\Jobs\FailsItself`:
					job.Fail(errors.New("given up"))
				case `App\Jobs\Throws`, `App\Jobs\ThrowsLastTry`:
					return errors.New("boom")
				}
				return nil
			})
		}
		// One job that already had its attempts: it fails before running.
		exhausted := push(t, q, "observed", `App\Jobs\Succeeds`)
		exec(t, q, fmt.Sprintf("update %s set attempts = 1 where payload like ?", q.Config().JobsTable), "%"+exhausted+"%")

		cfg := testConfig()
		cfg.Queues, cfg.Observers = []string{"observed"}, []JobObserver{obs}
		w, _ := newTestWorker(t, q, reg, cfg, nil)
		runWorker(t, w, 30*time.Second)

		for _, c := range cases {
			checkObserved(t, obs, c.class, uuids[c.class], len(c.want), c.want)
		}
		checkObserved(t, obs, "exhausted", exhausted, 2, []observedEnd{{jobqueue.OutcomeFailed, "max_attempts", JobEvents{Processing: true, Failed: true}}})
		if info := obs.started[uuids[`App\Jobs\Succeeds`]]; info.Connection != "database" || info.Queue != "observed" || info.Name() != `App\Jobs\Succeeds` {
			t.Errorf("JobStarted told %+v (name %q), want connection database, queue observed", info, info.Name())
		}
	})
}

// observedEnd is what a test expects JobEnded to be told.
type observedEnd struct {
	outcome jobqueue.Outcome
	reason  string
	events  JobEvents
}

// checkObserved checks the runs of one job, in order; attempt is the last
// run's.
func checkObserved(t *testing.T, obs *observed, what, uuid string, attempt int, want []observedEnd) {
	t.Helper()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	ends := obs.ended[uuid]
	if len(ends) != len(want) {
		t.Errorf("%s: JobEnded %d times, want %d: %+v", what, len(ends), len(want), ends)
		return
	}
	for i, end := range ends {
		w := want[i]
		if end.Outcome != w.outcome || end.Reason != w.reason || end.Events != w.events || !end.Written {
			t.Errorf("%s run %d: ended %+v, want outcome %d, reason %q, events %+v, written", what, i+1, end, w.outcome, w.reason, w.events)
		}
	}
	if got := obs.started[uuid].Attempt; got != attempt {
		t.Errorf("%s: last attempt %d, want %d", what, got, attempt)
	}
	if last := ends[len(ends)-1]; last.Ended.Before(obs.started[uuid].Started) {
		t.Errorf("%s: ended at %s, before it started at %s", what, last.Ended, obs.started[uuid].Started)
	}
}

// TestObserverSeesTheChainLinksPushed: a chain link's run tells the next
// link it pushed (Laravel raises JobQueued for it), with its queue and
// payload; the last link pushes none.
func TestObserverSeesTheChainLinksPushed(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, "sqlite"))
	obs := &observed{started: map[string]JobInfo{}, ended: map[string][]JobEnd{}}
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\ChainLinkJob`, func(context.Context, *handlers.Job) error { return nil })
	pushRaw(t, q, "chains", fixture(t, "chain.json"))
	cfg := testConfig()
	cfg.Queues, cfg.Concurrency, cfg.Observers = []string{"chains"}, 1, []JobObserver{obs}
	w, _ := newTestWorker(t, q, reg, cfg, nil)
	runWorker(t, w, 30*time.Second)
	var pushed []string
	started := map[string]bool{}
	for uuid, ends := range obs.ended {
		started[uuid] = true
		for _, qj := range ends[0].Queued {
			pushed = append(pushed, qj.Payload.UUID)
			if qj.Payload.DisplayName != `App\Jobs\ChainLinkJob` || qj.Queue != "chains" {
				t.Errorf("queued %+v (%s), want the next ChainLinkJob on queue chains", qj, qj.Payload.DisplayName)
			}
		}
	}
	if len(obs.ended) != 3 || len(pushed) != 2 {
		t.Fatalf("%d runs pushed %v: want 3 runs, 2 links pushed", len(obs.ended), pushed)
	}
	for _, u := range pushed {
		if !started[u] {
			t.Errorf("link %s was reported pushed but never ran", u)
		}
	}
}
