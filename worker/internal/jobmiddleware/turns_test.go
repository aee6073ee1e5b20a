package jobmiddleware

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testwait"
)

// TestKeyedMutexDropsIdleKeys: one key's holders take turns, other keys do
// not wait for them, and a key nobody holds or waits for is forgotten.
func TestKeyedMutexDropsIdleKeys(t *testing.T) {
	k := keyedMutex{held: map[string]*keyedTurn{}}
	var inside, most atomic.Int32
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			unlock := k.lock("a")
			n := inside.Add(1)
			if n > most.Load() {
				most.Store(n)
			}
			other := k.lock("b") // another key: free while "a" is held
			other()
			inside.Add(-1)
			unlock()
		}()
	}
	for range 8 {
		testwait.Recv(t, done, 10*time.Second, "a holder to finish")
	}
	if most.Load() != 1 {
		t.Errorf("%d holders of one key at once; want 1", most.Load())
	}
	if len(k.held) != 0 {
		t.Errorf("idle keys kept: %v", k.held)
	}
}
