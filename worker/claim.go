package worker

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/payload"
)

// claim reserves up to n jobs (one at a time in --laravel-exact mode).
// Only classes with a handler are reserved unless --unrouted=fail.
func (w *Worker) claim(ctx context.Context, n int) ([]jobqueue.JobRow, error) {
	opts, ok := w.claimOptions()
	queues := w.claimQueues()
	if !ok || len(queues) == 0 {
		return nil, nil
	}
	if w.cfg.LaravelExact {
		n = 1
	}
	started := time.Now()
	defer func() { w.cfg.Metrics.observeClaim(time.Since(started)) }()
	jobs, err := w.store.Claim(ctx, queues, n, opts)
	if err == nil {
		w.health.clear(kindSchema)
		w.health.clear(kindPermission)
	}
	return jobs, w.claimError(ctx, err)
}

// claimQueues are the configured queues minus the paused ones. No queue
// configured means the store's default queue, which is spelled "" here.
func (w *Worker) claimQueues() []string {
	queues := w.cfg.Queues
	if len(queues) == 0 {
		queues = []string{""}
	}
	paused := w.pausedQueues.Load()
	if paused == nil || len(*paused) == 0 {
		return queues
	}
	return slices.DeleteFunc(slices.Clone(queues), func(q string) bool { return slices.Contains(*paused, q) })
}

// claimOptions restricts claims to routed classes (unless --unrouted=fail)
// and away from rows given back to PHP; ok is false when nothing may be
// claimed at all.
func (w *Worker) claimOptions() (jobqueue.ClaimOptions, bool) {
	opts := jobqueue.ClaimOptions{ExcludeIDs: w.skip.list(w.now())}
	blocked := w.health.blockedClasses(w.now())
	if w.cfg.Unrouted == UnroutedSkip {
		opts.DisplayNames = withoutBlocked(w.reg.Names(), blocked)
		return opts, len(opts.DisplayNames) > 0
	}
	opts.ExcludeDisplayNames = blocked
	return opts, true
}

// reallyEmpty confirms an empty claim before --stop-when-empty stops: SKIP
// LOCKED skips rows other transactions hold, so an empty claim can happen
// while claimable rows exist.
func (w *Worker) reallyEmpty(ctx context.Context) bool {
	opts, ok := w.claimOptions()
	queues := w.claimQueues()
	if !ok || len(queues) == 0 {
		return true
	}
	n, err := w.store.CountClaimable(ctx, queues, opts)
	return err == nil && n == 0
}

// claimError fails a row whose reservation itself failed (attempts
// overflowing tinyint unsigned), as Laravel 12.54+ does, so it cannot wedge
// the queue; other errors are returned for the loop to log and retry.
func (w *Worker) claimError(ctx context.Context, err error) error {
	var ce *jobqueue.ClaimError
	if !errors.As(err, &ce) {
		return err
	}
	w.log.Error().Err(ce.Err).Int64("id", ce.Job.ID).Msg("reserving a job failed; failing it")
	p, _ := payload.Parse(ce.Job.Payload) // nil when unreadable: failRow then gives it a uuid
	// Fenced by the row as it was selected: failed only if nobody has
	// reserved it since.
	w.failRow(ce.Job, p, ce.Err, "")
	return errRowFailedAtClaim
}

// errRowFailedAtClaim tells the loop a claim found a row but failed it.
var errRowFailedAtClaim = errors.New("worker: a row failed while being reserved")
