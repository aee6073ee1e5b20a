package worker

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// One thread while idle (Config.NarrowWhenIdle). An idle worker's poll
// is one round trip, but on a machine with several cores each hand-off
// between the goroutines it takes (the loop's timer, the driver's
// connection and context watchers, the network poller) wakes another
// thread that spins and sleeps again: on the 2-core VMs measured, a tenth
// to a third of an idle worker's CPU and a third of its thread runs
// (docs/PERFORMANCE.md, "Idle CPU below PHP's"). So once every worker of
// the process has run nothing for narrowAfter, and one of them asked for
// it, the process runs Go code on one thread (GOMAXPROCS 1), and on all
// of them again before the first job a claim finds is dispatched.
// GOMAXPROCS is the process's, so every running worker counts, whether it
// asked for narrowing or not: the process narrows only when all are idle.

// narrowAfter is how long a worker runs nothing before it counts as idle:
// past the adaptive poll's ramp (idlewait.go), so that a steady stream of
// jobs with short gaps never narrows the process.
var narrowAfter = 2 * time.Second // a variable for the tests

// narrowing is the process's count of its running workers.
var narrowing narrower

type narrower struct {
	// wanting is how many running workers asked for narrowing: while none
	// did, workers leave the count alone (the loop reads it first).
	wanting atomic.Int32
	mu      sync.Mutex
	// members are the running workers and idle of them count as idle: a
	// worker that did not ask still keeps the process wide while it runs
	// jobs.
	members, idle int
	// saved is GOMAXPROCS before narrowing; 0 while not narrowed.
	saved int
}

// join counts a running worker in, busy; wants: it asks for narrowing.
func (n *narrower) join(wants bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.members++
	if wants {
		n.wanting.Add(1)
	}
	n.widenLocked()
}

// leave counts a worker out (idle: it counted as idle); the process
// widens when it narrowed.
func (n *narrower) leave(wants, idle bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.members--
	if wants {
		n.wanting.Add(-1)
	}
	if idle {
		n.idle--
	}
	n.widenLocked()
}

// count counts one worker as idle or busy; the last one to go idle
// narrows the process when a worker asked for it, the first one busy
// widens it.
func (n *narrower) count(idle bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !idle {
		n.idle--
		n.widenLocked()
		return
	}
	n.idle++
	if n.idle == n.members && n.wanting.Load() > 0 && n.saved == 0 {
		n.saved = runtime.GOMAXPROCS(1)
	}
}

// widenLocked gives the process back the threads it had: the runtime's
// default when it had that (so it keeps following the CPU limit of its
// container, as Go's default does), else the value it had.
func (n *narrower) widenLocked() {
	if n.saved == 0 {
		return
	}
	if n.saved == startThreads && threadsByDefault {
		runtime.SetDefaultGOMAXPROCS()
	} else {
		runtime.GOMAXPROCS(n.saved)
	}
	n.saved = 0
}

// startThreads is GOMAXPROCS as the process started; threadsByDefault:
// the runtime chose it ($GOMAXPROCS, which SetDefaultGOMAXPROCS ignores,
// is unset).
var (
	startThreads     = runtime.GOMAXPROCS(0)
	threadsByDefault = os.Getenv("GOMAXPROCS") == ""
)

// idleness is one worker's part in narrowing; only the loop uses it. The
// loop calls waiting only while a worker of the process wants narrowing
// and busy only when counted, so a worker without it runs no call more.
type idleness struct {
	wants bool
	// counted is whether the worker counts as idle in narrowing.
	counted bool
}

// start counts the worker in, busy; wants: it asks for narrowing.
func (i *idleness) start(wants bool) {
	i.wants, i.counted = wants, false
	narrowing.join(wants)
}

// stop counts the worker out.
func (i *idleness) stop() {
	narrowing.leave(i.wants, i.counted)
	i.counted = false
}

// waiting is called before an idle wait, quiet being how long nothing has
// run (idlePoll.quiet): after narrowAfter of it the worker counts as
// idle; a wait while jobs run (quiet 0) counts it busy.
func (i *idleness) waiting(quiet time.Duration) {
	switch {
	case quiet == 0:
		i.busy()
	case !i.counted && quiet >= narrowAfter:
		i.counted = true
		narrowing.count(true)
	}
}

// busy counts the worker busy again when it counted as idle: a claim
// found jobs, and the process has all its threads back before the first
// is dispatched.
func (i *idleness) busy() {
	if i.counted {
		i.counted = false
		narrowing.count(false)
	}
}
