package worker

import (
	"errors"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/payload"
)

// settle writes an outcome once, with the job's current reservation
// token. It reports false, writing nothing, when the outcome is no longer
// this run's to write: the job was released at shutdown after its handler
// was abandoned, or a lease refresh found it taken by another worker.
func (w *Worker) settle(r *running, p *payload.Payload, out outcome) bool {
	row, ok := r.take()
	if !ok {
		return false
	}
	if w.cfg.Ran != nil {
		w.cfg.Ran(row, r.started, w.now().Sub(r.started))
	}
	switch out.verdict {
	case verdictDelete:
		w.succeed(row, p, out)
	case verdictRelease:
		w.completer.release(row, out.delay)
	case verdictFail:
		err := errWithFrame(out)
		if note := w.chainStoppedNote(p); note != nil {
			err = errors.Join(err, note)
		}
		w.failRow(row, p, err, out.batchID)
	case verdictUnreserve:
		w.skip.add(row.ID, w.now())
		w.completer.unreserve(row)
	case verdictInterrupted:
		w.interrupted(row, p, out.abandoned)
	}
	w.cfg.Metrics.jobDone(row.Queue, w.metricsClass(p), out.reason, time.Since(r.started))
	return true
}

// metricsClass is the class label of the job metrics: the registered
// spelling for classes with a handler, "other" for the rest. Every label
// value lives as long as the process, so it must not come from payloads,
// which anyone who can write the jobs table controls.
func (w *Worker) metricsClass(p *payload.Payload) string {
	if p != nil {
		if name, ok := w.reg.Route(p.DisplayName); ok {
			return name
		}
	}
	return "other"
}

// chainStoppedNote explains, in failed_jobs, what Laravel would have done
// next on failure of a chained job and Go could not: run the chain's catch
// callbacks (PHP closures). The rest of the chain is not dispatched, as in
// Laravel.
func (w *Worker) chainStoppedNote(p *payload.Payload) error {
	if p == nil || p.Data.Command == "" {
		return nil
	}
	cmd, err := payload.DecodeCommand(p, w.cfg.Encrypter)
	if err != nil {
		return nil
	}
	q := cmd.Queueable()
	if len(q.ChainCatchCallbacks) == 0 && len(q.Chained) == 0 {
		return nil
	}
	return &PHPException{Class: `LaraWorker\ChainStoppedException`, Message: fmt.Sprintf(
		"The chain stopped at this job: %d later job(s) were not dispatched; its %d catch callback(s) are PHP closures that did not run (Go cannot run PHP code).",
		len(q.Chained), len(q.ChainCatchCallbacks))}
}

// framedError carries the location to print for errors without a stack.
type framedError struct {
	error
	where frame
}

func (e framedError) Unwrap() error { return e.error }

func errWithFrame(out outcome) error {
	if out.err == nil {
		return nil
	}
	return framedError{out.err, out.where}
}

// failRow writes a failed_jobs row and deletes the job in one transaction
// (with the batch's failure when batchID is set), retrying until the
// database takes it.
func (w *Worker) failRow(row jobqueue.JobRow, p *payload.Payload, err error, batchID string) {
	where := frame{File: "laraworker", Func: "worker"}
	var fe framedError
	if errors.As(err, &fe) && fe.where.File != "" {
		where = fe.where
	}
	w.completer.fail(row, p, exceptionText(withoutFrames(err), where), w.batchFailure(batchID, p))
}

// withoutFrames removes the framedError wrappers, which only carry the
// location, so they do not show up as exceptions of their own.
func withoutFrames(err error) error {
	if fe, ok := err.(framedError); ok {
		return fe.error
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		parts := joined.Unwrap()
		out := make([]error, len(parts))
		for i, e := range parts {
			out[i] = withoutFrames(e)
		}
		return errors.Join(out...)
	}
	return err
}

// releaseAbandoned gives back the jobs whose handlers did not stop in
// time at shutdown, as any job cut short by shutdown, so another worker
// runs them.
func (w *Worker) releaseAbandoned() {
	for _, r := range w.running.all() {
		if row, ok := r.take(); ok {
			p, err := payload.Parse(row.Payload) // parsed before its handler ran
			if err != nil {
				p = nil
			}
			if w.cfg.Ran != nil {
				w.cfg.Ran(row, r.started, w.now().Sub(r.started))
			}
			w.interrupted(row, p, true)
			w.cfg.Metrics.jobDone(row.Queue, w.metricsClass(p), "interrupted", time.Since(r.started))
		}
	}
}

func (w *Worker) logOutcome(row jobqueue.JobRow, p *payload.Payload, out outcome, d time.Duration) {
	ev := w.log.Info()
	if out.verdict == verdictFail {
		ev = w.log.Warn()
	}
	if out.err != nil {
		ev = ev.Str("error", out.err.Error())
	}
	ev.Str("uuid", p.UUID).Int64("id", row.ID).Str("class", p.Name()).Str("queue", row.Queue).
		Int("attempt", row.Attempts).Dur("duration_ms", d).Str("outcome", out.reason).Msg("job")
}
