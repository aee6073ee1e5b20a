package worker

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// The wait after a claim that found nothing. A store that signals pushes
// (jobqueue.Waiter: Redis's :notify lists) is waited on for up to --sleep,
// so a pushed job starts within milliseconds and an idle worker costs one
// blocking call per --sleep. Any other store is polled adaptively: right
// after a claim that found work the loop claims again at once; after an
// empty one it waits pollFirst, doubling after each further empty claim
// up to the shorter of --idle-poll and --sleep, with jitter so that
// processes started together do not claim in step. At 50 jobs/s the
// interval stays near pollFirst. Once nothing has run for idlePollFor the
// doubling goes on up to --sleep, as `php artisan queue:work` sleeps: a
// worker idle for long polls as often as PHP's (each poll of Go's costs
// less CPU than PHP's), and the first job after a quiet spell waits up to
// --sleep, as it does for PHP.

// pollFirst is the first wait after a claim that found nothing.
const pollFirst = 20 * time.Millisecond

// idlePollFor is how long after the last job --idle-poll bounds the poll.
const idlePollFor = time.Minute

// idlePoll is the adaptive poll's state: the last interval waited, and
// since when nothing has run (zero: a job runs, or a claim found one since
// the last wait).
type idlePoll struct {
	last       time.Duration
	quietSince time.Time
}

// found resets the poll after a claim that found work.
func (p *idlePoll) found() { p.last, p.quietSince = 0, time.Time{} }

// quiet is how long nothing has run before this wait, now: 0 while a job
// runs (nothingRuns false) and at the first wait after one.
func (p *idlePoll) quiet(nothingRuns bool, now time.Time) time.Duration {
	switch {
	case !nothingRuns:
		p.quietSince = time.Time{}
		return 0
	case p.quietSince.IsZero():
		p.quietSince = now
		return 0
	}
	return now.Sub(p.quietSince)
}

// next is the interval to wait after an empty claim: double the last,
// from pollFirst, up to ceiling, less a random quarter of it (jitter that
// never passes the ceiling).
func (p *idlePoll) next(ceiling time.Duration) time.Duration {
	d := pollFirst
	if p.last > 0 {
		d = 2 * p.last
	}
	d = min(d, ceiling)
	p.last = d
	return d - rand.N(d/4+1)
}

// idleWait waits after a claim on queues found nothing: --sleep, or
// less while Laravel's pause held every queue, so that queue:continue is
// seen within about a second (the claim was skipped: only the flags are
// read meanwhile).
func (w *Worker) idleWait(ctx context.Context, queues []string) {
	sleep := w.cfg.Sleep
	if w.lpause.allHeld {
		sleep = min(sleep, laravelPauseEvery)
	}
	if sleep <= 0 {
		return
	}
	quiet := w.poll.quiet(w.inflight.held.Load() == 0 && len(w.ahead.held) == 0, w.clock.Now())
	if narrowing.wanting.Load() > 0 {
		w.narrow.waiting(quiet)
	}
	if w.waiter != nil && w.waitForPush(ctx, queues, sleep) {
		return
	}
	ceiling := sleep
	if w.cfg.IdlePoll > 0 && !w.lpause.allHeld && quiet < idlePollFor {
		ceiling = min(ceiling, w.cfg.IdlePoll)
	}
	w.sleepOrWake(ctx, w.poll.next(ceiling))
}

// waitForPush waits on the store's signal of a push (w.waiter, not nil),
// for up to d or until the loop is woken (a job left, Resume): false when
// the store gives none now (the caller polls).
func (w *Worker) waitForPush(ctx context.Context, queues []string, d time.Duration) bool {
	if len(queues) == 0 || w.cfg.StopWhenEmpty || w.lpause.allHeld {
		// --stop-when-empty must see the jobs it waits for finish, and a
		// paused queue is looked at again every laravelPauseEvery.
		return false
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-w.wake:
			cancel()
		case <-stop:
		}
	}()
	_, err := w.waiter.WaitForJob(wctx, queues, d)
	switch {
	case errors.Is(err, jobqueue.ErrNotSupported):
		return false
	case err != nil && ctx.Err() == nil:
		w.log.Warn().Err(err).Msg("waiting for a job to be pushed failed; polling instead")
		return false
	}
	return true
}
