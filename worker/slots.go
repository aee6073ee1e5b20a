package worker

import (
	"context"
	"sync"
)

// slotPool runs claimed jobs on long-lived goroutines, one per busy slot,
// started as the slots first fill up. A goroutine per job would be
// created for each job and grow its stack again for each (payload
// parsing and command decoding go deep): on the no-op path that was a
// tenth of the worker's CPU. A handler still runs on a goroutine of its
// own (call), so an abandoned one never holds a slot goroutine.
type slotPool struct {
	work chan slotJob
	// started counts the goroutines; only the claim loop starts them.
	started, max int
	run          func(slotJob)
	wg           sync.WaitGroup
}

// slotJob is a claimed job and its context.
type slotJob struct {
	ctx context.Context
	r   *running
}

func newSlotPool(max int, run func(slotJob)) *slotPool {
	return &slotPool{work: make(chan slotJob), max: max, run: run}
}

// submit hands j to an idle goroutine, or starts one while fewer than
// max run. The caller holds a slot for j, so with max goroutines started
// one of them is free or about to be.
func (p *slotPool) submit(j slotJob) {
	select {
	case p.work <- j:
		return
	default:
	}
	if p.started < p.max {
		p.started++
		p.wg.Add(1)
		go p.serve(j)
		return
	}
	p.work <- j
}

func (p *slotPool) serve(first slotJob) {
	defer p.wg.Done()
	p.run(first)
	for j := range p.work {
		p.run(j)
	}
}

// close stops the goroutines once their jobs are done; call after the
// last submit.
func (p *slotPool) close() {
	close(p.work)
	p.wg.Wait()
}
