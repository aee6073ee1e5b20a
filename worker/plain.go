package worker

import (
	"strings"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// A plain job asks for none of the rules Laravel applies around a
// handler: no job middleware, unique lock, models, debounce, chain or
// batch, neither in its payload nor in its registration. Such a job takes
// the short path (decidePlain): its handler runs under its timeout and
// Laravel's exception rules, and the lookups the rules need (the bridge's
// record, the batch, the middleware plan, the lock, the next link) are
// not made, because each would find nothing. The test is conservative:
// anything it does not recognise as absent (a bridge record, a Laravel
// Context, a command it cannot read) takes the full path, which decides
// as before.

// isPlain reports whether the job is plain; cmd is its decoded command
// (nil for a Class@method job, which has none).
func (e *jobExecutor) isPlain(cmd *payload.Command) bool {
	p := e.payload
	if _, ok := p.Extra[bridgeproto.MetadataKey]; ok {
		return false // middleware, unique lock, models as the bridge recorded them
	}
	if _, ok := p.Extra[payload.ContextKey]; ok {
		return false // may name a unique lock (hidden context)
	}
	if p.Data.BatchID != nil {
		return false
	}
	if e.classRules {
		return false
	}
	// An encrypted command's text is its ciphertext, in which the model
	// test would find nothing.
	return cmd == nil || !cmd.Encrypted && plainCommand(cmd, p.Data.Command)
}

// classAsksForRules: the registration declares a unique lock, models,
// job middleware or debounce. deleteWhenMissingModels alone changes
// nothing for a job without models, which plainCommand makes sure of.
func classAsksForRules(c handlers.Class) bool {
	return c.Unique != nil || len(c.Models) > 0 || len(c.Middleware) > 0 || c.Debounce != nil
}

// plainCommand: the command holds no middleware, chain, chain catch
// callback, batch id or debounce owner (Bus\Queueable's properties), and
// no model (which PHP's unserialize would look up). The properties are
// read in one pass over the object's own, by short name whatever their
// visibility, without a call per property (issue 34 item 4): one is
// absent only when it holds null or an empty array, as PHP writes the
// defaults; any other value (a reference, an empty string) takes the full
// path, which decides as before.
func plainCommand(cmd *payload.Command, serialized string) bool {
	if strings.Contains(serialized, modelIdentifierClass) {
		return false
	}
	for _, e := range cmd.Object.Entries {
		if e.Key.IsInt {
			continue
		}
		name := e.Key.Str
		if i := strings.LastIndexByte(name, 0); i >= 0 {
			name = name[i+1:] // protected or private: "\0*\0name", "\0Class\0name"
		}
		switch name {
		case "middleware", "chained", "chainCatchCallbacks", "batchId", "debounceOwner":
			v := e.Value
			if v.Kind != phpserialize.KindNull && (v.Kind != phpserialize.KindArray || len(v.Entries) > 0) {
				return false
			}
		}
	}
	return true
}

// runPlain is decide's end for a plain job: what runClass does with
// nothing to apply (no model to look up, no debounce owner, an empty
// middleware plan, no UntilProcessing lock). The record and the batch are
// known to be absent, so no later step looks them up.
func (e *jobExecutor) runPlain(h handlers.Handler) outcome {
	e.plain = true
	e.metaRead = true
	e.batchKnown = true
	out := e.run(h)
	if out.verdict == verdictException {
		return e.onException(out.err, out.where)
	}
	return out
}
