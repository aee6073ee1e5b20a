package worker

import (
	"sync"
	"time"
)

// inFlight is the one record of the jobs a worker holds, from claim until
// their outcome is handed to the completer: each job's executor, how many
// of them have not decided their outcome yet (shutdown gives those Grace),
// and the goroutines that run them. Its limit is the concurrency: the
// producer claims as many jobs as there are free places.
//
// The goroutines are long-lived, one per busy place, started as the
// places first fill up. A goroutine per job would be created for each
// job and grow its stack again for each (payload parsing and command
// decoding go deep): on the no-op path that was a tenth of the worker's
// CPU. A handler still runs on a goroutine of its own (jobExecutor.call),
// so an abandoned one never holds a place's goroutine.
type inFlight struct {
	limit int
	// left is called after a job left: a place is free.
	left func()

	mu        sync.Mutex
	jobs      map[*jobExecutor]struct{}
	undecided int
	// decided is closed when no job is undecided; made on demand.
	decided chan struct{}

	work chan *jobExecutor
	// started counts the goroutines; only the producer starts them.
	started int
	exited  sync.WaitGroup
}

func newInFlight(limit int, left func()) *inFlight {
	return &inFlight{limit: limit, left: left, jobs: map[*jobExecutor]struct{}{}, work: make(chan *jobExecutor)}
}

// dispatch records e and runs it on an idle goroutine, or on a new one
// while fewer than limit run. The caller checked that a place is free, so
// with limit goroutines started one of them is idle or about to be.
func (f *inFlight) dispatch(e *jobExecutor) {
	f.mu.Lock()
	f.jobs[e] = struct{}{}
	f.undecided++
	f.mu.Unlock()
	select {
	case f.work <- e:
		return
	default:
	}
	if f.started < f.limit {
		f.started++
		f.exited.Add(1)
		go f.serve(e)
		return
	}
	f.work <- e
}

func (f *inFlight) serve(first *jobExecutor) {
	defer f.exited.Done()
	f.run(first)
	for e := range f.work {
		f.run(e)
	}
}

// run executes e; then e leaves and its place is free.
func (f *inFlight) run(e *jobExecutor) {
	e.execute()
	f.mu.Lock()
	delete(f.jobs, e)
	f.mu.Unlock()
	f.left()
}

// markDecided records that e's outcome is decided (its handler is done
// with it); the executor calls it once.
func (f *inFlight) markDecided() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.undecided--
	if f.undecided == 0 && f.decided != nil {
		close(f.decided)
		f.decided = nil
	}
}

// allDecided is closed once no job's outcome is undecided. Only
// meaningful when no more jobs are dispatched (shutdown).
func (f *inFlight) allDecided() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.undecided == 0 {
		done := make(chan struct{})
		close(done)
		return done
	}
	if f.decided == nil {
		f.decided = make(chan struct{})
	}
	return f.decided
}

func (f *inFlight) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.jobs)
}

// free is how many more jobs may be dispatched now.
func (f *inFlight) free() int { return max(f.limit-f.len(), 0) }

// all lists the jobs held now.
func (f *inFlight) all() []*jobExecutor {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*jobExecutor, 0, len(f.jobs))
	for e := range f.jobs {
		out = append(out, e)
	}
	return out
}

// olderThan lists the jobs held for at least d.
func (f *inFlight) olderThan(d time.Duration, now time.Time) []*jobExecutor {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*jobExecutor
	for e := range f.jobs {
		if now.Sub(e.started) >= d {
			out = append(out, e)
		}
	}
	return out
}

// close waits until every job has left and stops the goroutines; call
// after the last dispatch.
func (f *inFlight) close() {
	close(f.work)
	f.exited.Wait()
}
