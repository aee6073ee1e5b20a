package worker

import (
	"context"
	"errors"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/payload"
)

// ModelNotFoundClass is Laravel's exception for a job whose model is gone.
const ModelNotFoundClass = `Illuminate\Database\Eloquent\ModelNotFoundException`

// Outcome reasons of the missing-model path.
const (
	reasonModelMissing        = "model_missing"
	reasonModelMissingDeleted = "model_missing_deleted"
)

// jobOption equips a job with its registration's declarations and the
// database its model checks use.
func (w *Worker) jobOption(p *payload.Payload) handlers.JobOption {
	return handlers.WithClass(w.reg.Class(p.DisplayName), w.cfg.Models)
}

// runClass runs a job as CallQueuedHandler does around the handler: the
// command's models are looked up first (unserializing it in PHP does), a
// missing one takes Laravel's missing-model path, and an UntilProcessing
// lock is released just before the handler. (A handler's own
// ErrModelNotFound is turned into that path by run, before the exception
// rules.)
func (w *Worker) runClass(ctx context.Context, h handlers.Handler, job *handlers.Job, batchID string) outcome {
	if err := job.CheckModels(ctx); err != nil {
		if errors.Is(err, handlers.ErrModelNotFound) {
			return w.modelMissing(job, err)
		}
		// A lookup that failed (the database) is a job exception, as the
		// QueryException it would be in PHP.
		return w.onException(job, err, frame{File: "laraworker", Func: "CheckModels"}, batchID)
	}
	w.releaseBeforeRun(ctx, job)
	return w.run(ctx, h, job, batchID)
}

// modelMissing is handleModelNotFound: delete without a failure when the
// job deletes when models are missing (the payload says so on 13, the
// registration on 8-12), recording a batch success where the payload names
// its batch (12.51+); otherwise fail at once with ModelNotFoundException.
// The unique lock is released in releaseAfter, from the payload's context.
func (w *Worker) modelMissing(job *handlers.Job, err error) outcome {
	p := job.Payload
	deleteIt := job.Class().DeleteWhenMissingModels
	if p.Has("deleteWhenMissingModels") {
		deleteIt = p.DeleteWhenMissingModels
	}
	if deleteIt {
		// The batch success is written with the delete (no chain link:
		// Laravel only deletes the job).
		out := outcome{verdict: verdictDelete, reason: reasonModelMissingDeleted}
		if b := p.Data.BatchID; b != nil {
			out.batchID = *b
		}
		return out
	}
	var mnf *handlers.ModelNotFoundError
	msg := err.Error()
	if errors.As(err, &mnf) {
		msg = mnf.Error()
	}
	return outcome{verdict: verdictFail, reason: reasonModelMissing, err: &PHPException{Class: ModelNotFoundClass, Message: msg},
		where: handlerFrame(w.reg.Origin(job.DisplayName))}
}
