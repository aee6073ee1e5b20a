package worker

import (
	"errors"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
)

// nextInChain builds chained[0] as dispatchNextJobInChain does; nil at
// the end of the chain. The payload takes the shape (key set) of the
// current one, so a 12.x app gets 12.x keys. Go cannot know whether the
// next class implements ShouldBeEncrypted; it is encrypted when the
// current command was.
func (e *jobExecutor) nextInChain() *jobqueue.PushItem {
	cmd, err := e.job.Command()
	if err != nil || cmd == nil {
		return nil
	}
	next, err := payload.NextInChain(cmd)
	if errors.Is(err, payload.ErrChainEnd) {
		return nil
	}
	if err != nil {
		e.log.Error().Err(err).Str("uuid", e.job.UUID).Msg("cannot build the next job of the chain")
		return nil
	}
	opts := payload.BuildOptions{Shape: shapeOf(e.payload), Carried: e.carried()}
	if cmd.Encrypted {
		opts.Encrypter = e.cfg.Encrypter
	}
	raw, err := payload.BuildObjectPayload(next.Object, opts)
	if err != nil {
		e.log.Error().Err(err).Str("uuid", e.job.UUID).Msg("cannot encode the next job of the chain")
		return nil
	}
	q := next.Queueable()
	item := &jobqueue.PushItem{Payload: raw}
	if q.Queue != nil {
		item.Queue = *q.Queue
	}
	if q.Connection != nil && *q.Connection != e.connection() {
		e.log.Warn().Str("connection", *q.Connection).Msg("next chain link names another queue connection; pushing it to this one")
	}
	return item
}

// shapeOf picks the payload key set of the Laravel version that wrote p.
func shapeOf(p *payload.Payload) payload.Shape {
	switch {
	case p.Has("deleteWhenMissingModels"):
		return payload.Shape13
	case p.Data.Has("batchId"):
		return payload.Shape1251
	case p.Has("createdAt"):
		return payload.Shape12
	}
	return payload.Shape8
}
