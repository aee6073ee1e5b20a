package httpguard

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
)

var small = Policy{Free: 3, Base: time.Second, Max: 8 * time.Second, Forget: time.Minute}

// guessAll runs n checks of client at once, each failing, and counts
// those the limiter let through to the comparison.
func guessAll(l *Limiter, client string, n int) (compared int64) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if a, _ := l.Begin(client); a != nil {
				atomic.AddInt64(&compared, 1)
				time.Sleep(time.Millisecond) // the comparison takes a while
				a.Done(false)
			}
		}()
	}
	close(start)
	wg.Wait()
	return compared
}

// TestLimiterHoldsForParallelGuesses: 50 wrong guesses at once from one
// client: only the free ones are compared; then the client waits 1 s,
// 2 s, 4 s ... (at most Max) between single guesses; a success clears it.
func TestLimiterHoldsForParallelGuesses(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	l := NewLimiter(clk.Now, small, Policy{Free: 1000, Base: time.Second, Max: time.Minute, Forget: time.Hour})
	if n := guessAll(l, "10.0.0.1", 50); n != int64(small.Free) {
		t.Fatalf("%d of 50 parallel guesses were compared, want %d", n, small.Free)
	}
	a, wait := l.Begin("10.0.0.1")
	if a != nil || wait != time.Second {
		t.Fatalf("after %d failures: attempt %v, wait %s; want refused for 1s", small.Free, a, wait)
	}
	if a, _ := l.Begin("10.0.0.2"); a == nil {
		t.Fatal("another client is refused")
	} else {
		a.Done(true)
	}
	for _, want := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		clk.Advance(time.Second * 8)
		a, _ := l.Begin("10.0.0.1")
		if a == nil {
			t.Fatal("refused after the lockout ended")
		}
		if d, global := a.Done(false); d != want || global {
			t.Fatalf("lockout %s (global %v), want %s", d, global, want)
		}
		if n := guessAll(l, "10.0.0.1", 10); n != 0 {
			t.Fatalf("%d guesses compared during a lockout", n)
		}
	}
	clk.Advance(8 * time.Second)
	a, _ = l.Begin("10.0.0.1")
	a.Done(true)
	if mine, _ := l.Failures("10.0.0.1"); mine != 0 {
		t.Errorf("a success left %d failures", mine)
	}
	if n := guessAll(l, "10.0.0.1", 50); n != int64(small.Free) {
		t.Errorf("after a success %d guesses compared, want %d", n, small.Free)
	}
}

// TestLimiterGlobal: guesses spread over many clients (each within its
// free ones) lock everyone out once they pass the global budget.
func TestLimiterGlobal(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	l := NewLimiter(clk.Now, small, Policy{Free: 20, Base: time.Second, Max: time.Minute, Forget: time.Hour})
	failures := 0
	for i := range 10 {
		for range 2 {
			a, _ := l.Begin(string(rune('a' + i)))
			if a == nil {
				t.Fatalf("client %d refused before the global budget was spent", i)
			}
			failures++
			if _, global := a.Done(false); global != (failures == 20) {
				t.Fatalf("failure %d: global lockout %v", failures, global)
			}
		}
	}
	if a, wait := l.Begin("fresh"); a != nil || wait <= 0 {
		t.Fatalf("a new client during the global lockout: %v %s", a, wait)
	}
	clk.Advance(time.Second)
	a, _ := l.Begin("fresh")
	if a == nil {
		t.Fatal("refused after the global lockout ended")
	}
	if d, global := a.Done(false); !global || d != 2*time.Second {
		t.Errorf("the next failure locks everyone for %s (global %v), want 2s", d, global)
	}
}

// TestLimiterForgets: failures older than Forget are dropped, and the
// client map stays bounded.
func TestLimiterForgets(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	l := NewLimiter(clk.Now, small, Policy{Free: 1 << 30, Base: time.Second, Max: time.Minute, Forget: time.Hour})
	for range 2 {
		a, _ := l.Begin("c")
		a.Done(false)
	}
	clk.Advance(small.Forget)
	a, _ := l.Begin("c")
	if mine, _ := l.Failures("c"); mine != 0 {
		t.Errorf("%d failures remembered after Forget", mine)
	}
	a.Done(true)
	for i := range maxClients + 10 {
		a, _ := l.Begin(string(rune(i)) + "x")
		a.Done(false)
	}
	if n := len(l.clients); n > maxClients {
		t.Errorf("%d clients kept, the bound is %d", n, maxClients)
	}
}
