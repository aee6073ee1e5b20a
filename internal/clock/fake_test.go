package clock

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testwait"
)

var start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func fired(c <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-c:
		return t, true
	default:
		return time.Time{}, false
	}
}

func TestFakeTimerFiresWhenTheTimeComes(t *testing.T) {
	f := NewFake(start)
	timer := f.NewTimer(time.Minute)
	if f.Waiters() != 1 {
		t.Fatalf("%d waiters, want the timer", f.Waiters())
	}
	f.Advance(59 * time.Second)
	if _, ok := fired(timer.C()); ok {
		t.Fatal("fired early")
	}
	f.Advance(time.Second)
	at, ok := fired(timer.C())
	if !ok || !at.Equal(start.Add(time.Minute)) {
		t.Fatalf("fired %v at %v, want at %v", ok, at, start.Add(time.Minute))
	}
	if f.Waiters() != 0 || timer.Stop() {
		t.Fatal("a fired timer is still armed")
	}
}

func TestFakeTimerStopAndReset(t *testing.T) {
	f := NewFake(start)
	timer := f.NewTimer(time.Second)
	if !timer.Stop() {
		t.Fatal("Stop of an armed timer reported false")
	}
	f.Advance(time.Hour)
	if _, ok := fired(timer.C()); ok {
		t.Fatal("a stopped timer fired")
	}
	timer.Reset(time.Second)
	f.Advance(time.Second)
	timer.Reset(time.Second) // the undelivered tick is dropped
	if _, ok := fired(timer.C()); ok {
		t.Fatal("a tick from before Reset was received after it")
	}
	f.Advance(time.Second)
	if _, ok := fired(timer.C()); !ok {
		t.Fatal("a reset timer did not fire")
	}
}

func TestFakeTickerTicksEveryPeriodAndDropsMissedTicks(t *testing.T) {
	f := NewFake(start)
	tick := f.NewTicker(10 * time.Second)
	defer tick.Stop()
	f.Advance(25 * time.Second)
	at, ok := fired(tick.C())
	if !ok || !at.Equal(start.Add(10*time.Second)) {
		t.Fatalf("first tick %v at %v, want the one at 10s (the 20s one is dropped)", ok, at)
	}
	if _, ok := fired(tick.C()); ok {
		t.Fatal("two ticks queued")
	}
	f.Advance(5 * time.Second)
	if at, ok := fired(tick.C()); !ok || !at.Equal(start.Add(30*time.Second)) {
		t.Fatalf("tick at %v, want at 30s", at)
	}
	if !f.Now().Equal(start.Add(30 * time.Second)) {
		t.Fatalf("now %v", f.Now())
	}
}

func TestFakeAfterFuncRunsInItsOwnGoroutine(t *testing.T) {
	f := NewFake(start)
	var calls atomic.Int32
	f.AfterFunc(time.Second, func() { calls.Add(1) })
	stopped := f.AfterFunc(time.Second, func() { calls.Add(10) })
	stopped.Stop()
	f.Advance(time.Second)
	testwait.Until(t, 5*time.Second, "the function to run", func() bool { return calls.Load() == 1 })
	f.AfterFunc(0, func() { calls.Add(1) }) // due at once
	testwait.Until(t, 5*time.Second, "the due function to run", func() bool { return calls.Load() == 2 })
}

func TestSystemClockUsesItsNow(t *testing.T) {
	c := System(func() time.Time { return start })
	if !c.Now().Equal(start) {
		t.Fatalf("Now = %v", c.Now())
	}
	timer := c.NewTimer(time.Millisecond)
	testwait.Recv(t, timer.C(), 5*time.Second, "the real timer")
	if System(nil).Now().IsZero() {
		t.Fatal("System(nil) has no time")
	}
}
