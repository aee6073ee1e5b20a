package bench

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// rawStoreDrain is the worker's own statements with nothing of the
// worker around them: the store's Claim (the size laraworker's c128
// claims reach, ct.batch) on one loop and its grouped Delete on another,
// one of each in flight, a delete starting at most every
// rawStoreDeleteSpacing with every row claimed since the previous one,
// as the worker's completer does. No payload parsing, no handler, no
// goroutine or log line per job: what the database allows for the
// statements, sizes and pipelining lw-c128 uses, so lw-c128 against it is
// the cost of the worker's own job path.
func (b *runner) rawStoreDrain(ctx context.Context, ct contender) (procStats, error) {
	start := time.Now()
	opts := jobqueue.ClaimOptions{DisplayNames: []string{benchClass}}
	claimed := make(chan []jobqueue.JobRow, 64)
	deleted := make(chan error, 1)
	go func() { deleted <- b.rawStoreDeletes(ctx, claimed) }()
	claimErrs := make([]error, max(1, ct.claimers))
	var wg sync.WaitGroup
	for i := range claimErrs {
		wg.Go(func() {
			for {
				jobs, err := b.q.Claim(ctx, []string{"default"}, ct.batch, opts)
				if err != nil || len(jobs) == 0 {
					claimErrs[i] = err
					return
				}
				claimed <- jobs
			}
		})
	}
	wg.Wait()
	close(claimed)
	if err := errors.Join(append(claimErrs, <-deleted)...); err != nil {
		return procStats{}, err
	}
	return procStats{wall: time.Since(start)}, nil
}

// rawStoreDeleteSpacing is the worker's completer's deleteSpacing.
const rawStoreDeleteSpacing = 5 * time.Millisecond

// rawStoreDeletes deletes what the claims hand over until they stop.
func (b *runner) rawStoreDeletes(ctx context.Context, claimed <-chan []jobqueue.JobRow) error {
	var last time.Time
	for jobs := range claimed {
		batch := append([]jobqueue.JobRow(nil), jobs...)
		if wait := rawStoreDeleteSpacing - time.Since(last); wait > 0 {
			time.Sleep(wait)
		}
	gather:
		for {
			select {
			case more, ok := <-claimed:
				if !ok {
					break gather
				}
				batch = append(batch, more...)
			default:
				break gather
			}
		}
		last = time.Now()
		for len(batch) > 0 {
			n := min(len(batch), 500) // the completer's deleteBatchMax
			lost, err := b.q.Delete(ctx, batch[:n])
			if err != nil {
				return err
			}
			if len(lost) > 0 {
				return errors.New("raw store loop: a delete found its reservation lost")
			}
			batch = batch[n:]
		}
	}
	return nil
}
