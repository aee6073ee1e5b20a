package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
)

// What a Laravel 8-12 payload does not carry and PHP reads from the class
// (its unique lock on 8-11.38, its models' tables, deleteWhenMissingModels)
// the bridge records at dispatch in the payload's "laraworker" key
// (bridge/PROTOCOL.md): the worker reads it there, so a class runs in Go
// as in PHP without a Go-side declaration (handlers.ShouldBeUnique,
// handlers.Models, handlers.DeleteWhenMissingModels), which it takes
// only when the key is absent.

// record is the payload's bridge record (metadata, read once), nil when
// it has none or an unreadable one (decide fails such a job, with the
// cause, before it runs: nil here only serves the unique lock's release).
func (e *jobExecutor) record() *bridgeproto.Metadata {
	if e.payload == nil {
		return nil
	}
	m, _ := e.metadata()
	return m
}

// computed reports whether the bridge computed part of its metadata (its
// errors name the parts it could not).
func computed(m *bridgeproto.Metadata, part string) bool {
	if m == nil {
		return false
	}
	for _, e := range m.Errors {
		if strings.HasPrefix(e, part+":") || strings.HasPrefix(e, "metadata:") {
			return false
		}
	}
	return true
}

// recordedUnique is the ShouldBeUnique lock the bridge recorded; nil for a
// class that is not unique, or when it did not record one.
func (e *jobExecutor) recordedUnique() *bridgeproto.Unique {
	if m := e.record(); computed(m, "unique") {
		return m.Unique
	}
	return nil
}

// untilProcessing: the job's lock goes just before it runs
// (ShouldBeUniqueUntilProcessing), as recorded or declared.
func (e *jobExecutor) untilProcessing() bool {
	if u := e.recordedUnique(); u != nil {
		return u.UntilProcessing
	}
	class := e.job.Class()
	return class.Unique != nil && class.Unique.UntilProcessing
}

// deleteWhenMissingModels is what handleModelNotFound decides: Laravel
// 13's payload flag, else what the bridge recorded for this version, else
// the registration's declaration.
func (e *jobExecutor) deleteWhenMissingModels() bool {
	p := e.payload
	if p.Has("deleteWhenMissingModels") {
		return p.DeleteWhenMissingModels
	}
	if m := e.record(); computed(m, "delete_when_missing_models") {
		return m.DeleteWhenMissingModels
	}
	return e.job.Class().DeleteWhenMissingModels
}

// checkModels looks up the models the command holds, as unserializing it
// in PHP does (SerializesModels): those the bridge recorded, else those
// the registration names. A missing one is a *handlers.ModelNotFoundError.
func (e *jobExecutor) checkModels() error {
	if m := e.record(); computed(m, "models") {
		return e.checkRecordedModels(m.Models)
	}
	e.warnUndeclaredModels()
	return e.job.CheckModels(e.ctx)
}

// checkRecordedModels looks up each single model the bridge recorded
// (collections lose missing rows silently in PHP: nothing to check).
func (e *jobExecutor) checkRecordedModels(models []bridgeproto.Model) error {
	for _, m := range models {
		if m.Collection || len(m.IDs) == 0 {
			continue
		}
		if m.Table == "" {
			e.noteOnce("model-entity\x00"+m.Class, "this job holds a model that is not an Eloquent model (a QueueableEntity): Go cannot tell whether it still exists, and runs the job", zerolog.Dict().Str("model", m.Class).Str("property", m.Property))
			continue
		}
		if c := e.cfg.ModelsConnection; c != "" && m.Connection != "" && m.Connection != c {
			e.noteOnce("model-conn\x00"+e.payload.Name()+"\x00"+m.Class, "this job's model lives on another database connection than the one Go looks models up in: Go cannot tell whether it still exists, and runs the job",
				zerolog.Dict().Str("model", m.Class).Str("connection", m.Connection).Str("lookup_connection", c))
			continue
		}
		if e.cfg.Models == nil {
			return errors.New("the job holds models but the worker has no database to look them up in (Config.Models)")
		}
		id, err := modelID(m.IDs[0])
		if err != nil {
			return fmt.Errorf("the bridge's record of %s: %w", m.Class, err)
		}
		found, err := e.cfg.Models.ModelExists(e.ctx, m.Table, m.Key, id)
		if err != nil {
			return fmt.Errorf("looking up %s %v in %s: %w", m.Class, id, m.Table, err)
		}
		if !found {
			return &handlers.ModelNotFoundError{Class: m.Class}
		}
	}
	return nil
}

// modelID is a recorded key: a JSON integer or string.
func modelID(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		return x.String(), nil
	}
	return nil, fmt.Errorf("a model key %s is neither a number nor a string", raw)
}

// warnUndeclaredModels says once per class that Go cannot tell a missing
// model of a job that holds models it knows nothing of: no bridge
// metadata, no registration naming them.
func (e *jobExecutor) warnUndeclaredModels() {
	// Cheap tests first: this runs for every job without the bridge's
	// record, and decoding the command is not.
	command := e.payload.Data.Command
	if len(e.job.Class().Models) > 0 || !payload.IsPlainCommand(command) || !strings.Contains(command, modelIdentifierClass) {
		return
	}
	key := "models\x00" + e.payload.Name()
	if e.notes.Has(key) {
		return
	}
	models, err := e.job.Models()
	if err != nil {
		return
	}
	for _, m := range models {
		if strings.Contains(m.Path, ".") || m.Model.IsCollection() {
			continue
		}
		e.noteOnce(key, "this job holds models, but its payload has no record of them by the bridge (the bridge is not installed, does not route the class, or the job was queued before it: see README) and the registration names none: Go does not know their tables nor deleteWhenMissingModels, and a job whose model was deleted runs anyway, where PHP would fail or delete it",
			zerolog.Dict().Str("model", m.Model.Class).Str("property", m.Path))
		return
	}
}

// modelIdentifierClass is how SerializesModels serializes a model.
const modelIdentifierClass = `"Illuminate\Contracts\Database\ModelIdentifier"`

// noteOnce logs msg once per key (a class, a model...).
func (e *jobExecutor) noteOnce(key, msg string, fields *zerolog.Event) {
	if e.notes.Once(key) {
		e.log.Warn().Str("class", e.payload.Name()).Dict("detail", fields).Msg(msg)
	}
}
