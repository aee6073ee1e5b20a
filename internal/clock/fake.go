package clock

import (
	"sync"
	"time"
)

// Fake is a Clock that moves only when Advance is called. Its timers and
// tickers fire during Advance, in time order, with Now reading each one's
// time as it fires; AfterFunc functions run in goroutines of their own,
// as with the real clock. A channel holds one value, and Stop and Reset
// empty it, as Go 1.23's timers do. It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	pending []*fakeTimer
}

// NewFake returns a clock reading start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now is the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the time d forward, firing every timer due by then.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	target := f.now.Add(d)
	var calls []func()
	for {
		t := f.next(target)
		if t == nil {
			break
		}
		f.now = t.at
		if fn := t.fire(); fn != nil {
			calls = append(calls, fn)
		}
	}
	f.now = target
	f.mu.Unlock()
	for _, fn := range calls {
		go fn()
	}
}

// Waiters is how many timers and tickers are armed: a test waits for the
// code under test to be waiting before it advances the time.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// next is the earliest timer due by target, nil if none.
func (f *Fake) next(target time.Time) *fakeTimer {
	var first *fakeTimer
	for _, t := range f.pending {
		if !t.at.After(target) && (first == nil || t.at.Before(first.at)) {
			first = t
		}
	}
	return first
}

// NewTimer is time.NewTimer on the fake time.
func (f *Fake) NewTimer(d time.Duration) Timer {
	return f.arm(&fakeTimer{clock: f, c: make(chan time.Time, 1)}, d)
}

// NewTicker is time.NewTicker on the fake time.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	return fakeTicker{f.arm(&fakeTimer{clock: f, c: make(chan time.Time, 1), period: d}, d)}
}

// AfterFunc is time.AfterFunc on the fake time.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	return f.arm(&fakeTimer{clock: f, fn: fn}, d)
}

// arm schedules t d from now (at once when d <= 0).
func (f *Fake) arm(t *fakeTimer, d time.Duration) *fakeTimer {
	f.mu.Lock()
	fn := f.schedule(t, d)
	f.mu.Unlock()
	if fn != nil {
		go fn()
	}
	return t
}

// schedule adds t to the pending timers, firing it at once when d <= 0;
// it returns the function to call for an AfterFunc that fired. The caller
// holds f.mu.
func (f *Fake) schedule(t *fakeTimer, d time.Duration) func() {
	t.at = f.now.Add(d)
	f.pending = append(f.pending, t)
	if d <= 0 {
		return t.fire()
	}
	return nil
}

// disarm removes t from the pending timers; it reports whether t was
// pending. The caller holds f.mu.
func (f *Fake) disarm(t *fakeTimer) bool {
	for i, p := range f.pending {
		if p == t {
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
			return true
		}
	}
	return false
}

// fakeTimer is a timer, a ticker (period > 0) or an AfterFunc (fn set).
type fakeTimer struct {
	clock  *Fake
	at     time.Time
	period time.Duration
	c      chan time.Time
	fn     func()
}

// fire delivers the tick (dropped if the last one was not read) and
// rearms a ticker; it returns the function to call for an AfterFunc. The
// caller holds the clock's lock.
func (t *fakeTimer) fire() func() {
	if t.period > 0 {
		t.at = t.at.Add(t.period)
	} else {
		t.clock.disarm(t)
	}
	if t.fn != nil {
		return t.fn
	}
	select {
	case t.c <- t.clock.now:
	default:
	}
	return nil
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	t.drain()
	return t.clock.disarm(t)
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.clock.mu.Lock()
	active := t.clock.disarm(t)
	t.drain()
	if t.period > 0 {
		t.period = d
	}
	fn := t.clock.schedule(t, d)
	t.clock.mu.Unlock()
	if fn != nil {
		go fn()
	}
	return active
}

// drain empties the channel, so no value from before a Stop or Reset is
// received after it.
func (t *fakeTimer) drain() {
	if t.c == nil {
		return
	}
	select {
	case <-t.c:
	default:
	}
}

// Ticker's Stop has no result.
type fakeTicker struct{ *fakeTimer }

func (t fakeTicker) Stop() { t.fakeTimer.Stop() }
