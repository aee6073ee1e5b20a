package worker

import (
	"context"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/store/database"
)

// TestIdlePollDoublesToItsCeilingWithJitter: the wait after empty claims
// starts at pollFirst, doubles, never passes the ceiling, and is spread
// so that processes do not claim in step; a claim that found work starts
// it over.
func TestIdlePollDoublesToItsCeilingWithJitter(t *testing.T) {
	var p idlePoll
	ceiling := time.Second
	want := pollFirst
	for range 12 {
		d := p.next(ceiling)
		if d < want*3/4 || d > want {
			t.Fatalf("waited %s, want %s less at most a quarter", d, want)
		}
		want = min(2*want, ceiling)
	}
	if p.last != ceiling {
		t.Fatalf("after 12 empty claims the interval is %s, want the ceiling %s", p.last, ceiling)
	}
	spread := map[time.Duration]bool{}
	for range 20 {
		spread[p.next(ceiling)] = true
	}
	if len(spread) < 10 {
		t.Fatalf("20 waits at the ceiling took %d distinct values: no jitter", len(spread))
	}
	p.found()
	if d := p.next(ceiling); d > pollFirst {
		t.Fatalf("after a claim that found work the wait is %s, want about %s", d, pollFirst)
	}
}

// TestIdleWorkerPicksUpAPushedJobLongBeforeItsSleepEnds: a worker with
// --sleep 10s that has been idle long enough to back off fully still
// starts a job pushed (as Laravel inserts it) within --idle-poll, not
// after the sleep: on every database.
func TestIdleWorkerPicksUpAPushedJobLongBeforeItsSleepEnds(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		started := make(chan time.Time, 1)
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error {
			started <- time.Now()
			return nil
		})
		cfg := testConfig()
		cfg.Sleep, cfg.StopWhenEmpty = 10*time.Second, false
		w, _ := newTestWorker(t, q, reg, cfg, nil)
		run := startWorker(w, time.Minute)
		defer func() { run.stop(); run.wait(t) }()
		// pollFirst doubling to the 1 s ceiling takes 7 empty claims; a few
		// more and the worker has been waiting at the ceiling.
		testwait.Until(t, 20*time.Second, "the worker backing off", func() bool { return w.Stats().Loops >= 10 })
		pushed := time.Now()
		push(t, q, "", classA)
		select {
		case at := <-started:
			// The ceiling (--idle-poll, 1 s) plus the claim; a worker that
			// slept --sleep would take up to 10 s.
			if took := at.Sub(pushed); took > 3*time.Second {
				t.Fatalf("the job started %s after its push, want within --idle-poll", took)
			}
		case <-time.After(8 * time.Second):
			t.Fatal("the job did not start within 8 s of its push: the idle worker sleeps --sleep")
		}
	})
}

// TestIdlePollBacksOffToSleepAfterAQuietMinute: at the defaults (--sleep
// 3s, --idle-poll 1s) an idle worker on a database claims at least once a
// second for the first minute, then backs off to --sleep as PHP's worker
// sleeps; a job found brings the short poll back at once. On a fake
// clock, each interval measured to within the step the clock moves.
func TestIdlePollBacksOffToSleepAfterAQuietMinute(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, "sqlite"))
	started := make(chan struct{}, 1)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error {
		started <- struct{}{}
		return nil
	})
	cfg := testConfig()
	cfg.Sleep, cfg.StopWhenEmpty = DefaultSleep, false
	fake := withFakeClock(&cfg)
	w, _ := newTestWorker(t, q, reg, cfg, nil)
	run := startWorker(w, time.Minute)
	defer func() { run.stop(); run.wait(t) }()

	const step = 50 * time.Millisecond
	// interval moves the fake clock until the waiting loop claims again,
	// and returns how far it moved.
	interval := func() time.Duration {
		testwait.Until(t, 10*time.Second, "the loop to wait", func() bool { return fake.Waiters() >= 2 })
		loops := w.Stats().Loops
		var moved time.Duration
		for fake.Waiters() >= 2 && w.Stats().Loops == loops {
			fake.Advance(step)
			moved += step
			if moved > time.Minute {
				t.Fatal("the loop did not claim again within a minute of fake time")
			}
		}
		return moved
	}

	began := fake.Now()
	for fake.Now().Sub(began) < idlePollFor-DefaultIdlePoll {
		if d := interval(); d > DefaultIdlePoll {
			t.Fatalf("%s after the start the poll waited %s, want at most --idle-poll (1s)", fake.Now().Sub(began), d)
		}
	}
	var last time.Duration
	for range 4 {
		if last = interval(); last > DefaultSleep {
			t.Fatalf("a quiet minute on, the poll waited %s, past --sleep", last)
		}
	}
	if last < DefaultSleep*3/4-step {
		t.Fatalf("a quiet minute on, the poll waits %s, want --sleep less its jitter (2.25-3s)", last)
	}

	testwait.Until(t, 10*time.Second, "the loop to wait", func() bool { return fake.Waiters() >= 2 })
	push(t, q, "", classA)
	interval()
	<-started
	for range 10 {
		if d := interval(); d > DefaultIdlePoll {
			t.Fatalf("after a job the poll waited %s, want at most --idle-poll (1s) again", d)
		}
	}
}
