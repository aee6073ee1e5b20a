package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers on it.
type Clock interface {
	Now() time.Time
	// NewTimer fires once, d from now, as time.NewTimer.
	NewTimer(d time.Duration) Timer
	// NewTicker fires every d, dropping ticks a slow reader misses, as
	// time.NewTicker.
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f in its own goroutine d from now, as time.AfterFunc.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a *time.Timer whose channel is a method.
type Timer interface {
	C() <-chan time.Time
	// Stop reports whether it stopped the timer before it fired.
	Stop() bool
	// Reset rearms the timer d from now; it reports whether it was active.
	Reset(d time.Duration) bool
}

// Ticker is a *time.Ticker whose channel is a method.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// System is the real clock. now replaces time.Now when set (a caller's
// own time source); timers always run on real time.
func System(now func() time.Time) Clock {
	if now == nil {
		now = time.Now
	}
	return system{now: now}
}

type system struct{ now func() time.Time }

func (s system) Now() time.Time { return s.now() }

func (system) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

func (system) NewTicker(d time.Duration) Ticker { return systemTicker{time.NewTicker(d)} }

func (system) AfterFunc(d time.Duration, f func()) Timer { return systemTimer{time.AfterFunc(d, f)} }

type systemTimer struct{ *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.Timer.C }

type systemTicker struct{ *time.Ticker }

func (t systemTicker) C() <-chan time.Time { return t.Ticker.C }

// Sleep waits d on c, or less when ctx ends.
func Sleep(ctx context.Context, c Clock, d time.Duration) {
	if d <= 0 {
		return
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	}
}
