package worker

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
)

// A job that shutdown cuts short (it still ran when --grace ended, or its
// handler ignored the cancellation) is not the job's fault: it goes back
// with its attempt restored, as a configuration error's job does, so a
// deploy never fails it (with --tries=1 a counted attempt would make the
// next worker fail it with MaxAttemptsExceededException).
//
// Restoring without limit would let a job that always outlives --grace
// run again at every stop signal and never count an attempt. So each
// interruption is counted per job uuid in the app's shared cache (the
// database store, which every worker of the app reads): the first
// maxRestoredInterruptions restore the attempt; from the next one on the
// attempt counts, as Laravel's would, and the log names the job's
// timeout against --grace. A day without an interruption starts the
// count again. Without a shared cache nothing can count across workers:
// the attempt is always restored (each run again needs another stop
// signal), and the log line says the bound is off.

// maxRestoredInterruptions is how many shutdowns in a row may cut one job
// short with its attempt restored.
const maxRestoredInterruptions = 3

// interruptionsTTL is how long an interruption count is kept after the
// last interruption.
const interruptionsTTL = 24 * time.Hour

// interruptionsKey is the cache key of a job's interruption count.
func interruptionsKey(uuid string) string { return "laraworker:interrupted:" + uuid }

// interrupted writes the outcome of a job that shutdown cut short: the
// row back as before the claim while the bound allows it, else released
// with its attempt counted. It logs one line and counts the job.
func (d *executorDeps) interrupted(row jobqueue.JobRow, p *payload.Payload, abandoned bool) {
	n, err := d.countInterruption(p)
	restore := n == 0 || n <= maxRestoredInterruptions
	ev := d.log.Warn().Int64("id", row.ID).Str("queue", row.Queue)
	if p != nil {
		ev = ev.Str("uuid", p.UUID).Str("class", p.Name())
	}
	if abandoned {
		ev = ev.Bool("handler_abandoned", true)
	}
	switch {
	case err != nil:
		ev = ev.AnErr("bound_error", err).Str("bound", "not applied: the interruption count could not be read or written")
	case n == 0:
		ev = ev.Str("bound", "none: no shared cache (the app's cache store is not database), so interruptions are not counted")
	default:
		ev = ev.Int("interruption", int(n)).Int("restored_at_most", maxRestoredInterruptions)
	}
	attempt := "restored"
	if restore {
		ev.Msg("cut short by shutdown; its attempt is restored")
		d.completer.restore(row)
	} else {
		attempt = "counted"
		ev.Msg(fmt.Sprintf("cut short by shutdown for the %s time in a row; its attempt counts, as Laravel's would: %s",
			ordinal(n), d.graceAdvice(p, abandoned)))
		d.completer.release(row, 0)
	}
	d.stats.interrupted.Add(1)
	d.cfg.Metrics.jobInterrupted(row.Queue, d.metricsClass(p), attempt)
}

// countInterruption adds this interruption to the job's count and returns
// the count; 0 when there is nothing to count in (no shared cache, no
// uuid). An error leaves the attempt restored: the count is a guard
// against loops, and a deploy must not fail a job because the cache was
// unreachable.
func (d *executorDeps) countInterruption(p *payload.Payload) (int64, error) {
	if d.cfg.Cache == nil || p == nil || p.UUID == "" {
		return 0, nil
	}
	// Writes at shutdown get until the write deadline.
	ctx := d.completer.writeCtx
	key := interruptionsKey(p.UUID)
	v, ok, err := d.cfg.Cache.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	n := int64(1)
	if ok {
		n = serializedInt(v) + 1
	}
	if err := d.cfg.Cache.Put(ctx, key, []byte("i:"+strconv.FormatInt(n, 10)+";"), interruptionsTTL); err != nil {
		return 0, err
	}
	return n, nil
}

// serializedInt reads a PHP-serialized int ("i:3;"); anything else is 0.
func serializedInt(v []byte) int64 {
	s, ok := strings.CutPrefix(string(v), "i:")
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(s, ";"), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// graceAdvice says why a job keeps being cut short and what to change.
func (d *executorDeps) graceAdvice(p *payload.Payload, abandoned bool) string {
	if abandoned {
		return "its handler ignores the cancellation of its context; make it return when ctx is done"
	}
	grace := d.cfg.Grace
	if p == nil {
		return fmt.Sprintf("it runs longer than --grace (%s)", grace)
	}
	switch timeout := d.cfg.timeout(p); {
	case timeout == 0:
		return fmt.Sprintf("it has no timeout and runs longer than --grace (%s): raise --grace (and the supervisor's stop timeout) above its run time", grace)
	case timeout > grace:
		return fmt.Sprintf("its timeout (%s) is longer than --grace (%s): raise --grace (and the supervisor's stop timeout) above the timeout, or shorten the job", timeout, grace)
	}
	return fmt.Sprintf("it runs longer than --grace (%s)", grace)
}

// ordinal is 1st, 2nd, 3rd, 4th, ...
func ordinal(n int64) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.FormatInt(n, 10) + suffix
}
