package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrModelNotFound reports that a model the job holds no longer exists.
// A handler returns it (wrapped, or as a *ModelNotFoundError) and the
// worker does what Laravel does when SerializesModels cannot load a
// model: the job is deleted without a failure when its class deletes when
// models are missing, and failed at once (no retry) otherwise, with
// Laravel's ModelNotFoundException.
var ErrModelNotFound = errors.New("handlers: model not found")

// ModelNotFoundError is Laravel's ModelNotFoundException for one model.
type ModelNotFoundError struct {
	Class string // the model class, e.g. `App\Models\Podcast`
	// IDs are the keys looked up. Restoring a job's model does not name
	// them, so the worker's own check leaves them empty, as PHP does.
	IDs []any
}

// ModelNotFound returns the error a handler gives when a model is gone.
func ModelNotFound(class string, ids ...any) error {
	return &ModelNotFoundError{Class: class, IDs: ids}
}

// Error is Laravel's text: "No query results for model [C]." or, with
// ids, "No query results for model [C] 1, 2".
func (e *ModelNotFoundError) Error() string {
	msg := "No query results for model [" + e.Class + "]"
	if len(e.IDs) == 0 {
		return msg + "."
	}
	ids := make([]string, len(e.IDs))
	for i, id := range e.IDs {
		ids[i] = fmt.Sprint(id)
	}
	return msg + " " + strings.Join(ids, ", ")
}

// Is makes errors.Is(err, ErrModelNotFound) true.
func (e *ModelNotFoundError) Is(target error) bool { return target == ErrModelNotFound }

// ModelLookup tells whether a model's row exists. *database.Queue
// implements it on the app's database (the worker's Config.Models).
type ModelLookup interface {
	ModelExists(ctx context.Context, table, key string, id any) (bool, error)
}

// JobOption equips a Job the worker builds with what its registration
// declared.
type JobOption func(*Job)

// WithClass gives the job its registration's Class and the lookup its
// model checks use (nil: models cannot be checked).
func WithClass(c Class, lookup ModelLookup) JobOption {
	return func(j *Job) { j.class, j.lookup = c, lookup }
}

// Class is what the job's registration declared about its PHP class.
func (j *Job) Class() Class { return j.class }

// CheckModels looks up every model of the command's own properties whose
// class the registration names (handlers.Models) and returns a
// *ModelNotFoundError for the first one that is gone, as unserializing the
// job in PHP would throw. Collections are not checked (PHP keeps what is
// left of them); nor are models of classes the registration does not
// name. The worker calls it before each run; a handler may call it again
// later. Lookup errors are returned as they are.
func (j *Job) CheckModels(ctx context.Context) error {
	if len(j.class.Models) == 0 {
		return nil
	}
	if j.lookup == nil {
		return errors.New("handlers: the registration names model tables but the worker has no database to look them up in")
	}
	models, err := j.Models()
	if err != nil {
		return err
	}
	for _, m := range models {
		if strings.Contains(m.Path, ".") || m.Model.IsCollection() {
			continue // only the command's own properties are restored
		}
		decl, ok := j.class.model(m.Model.Class)
		if !ok {
			continue
		}
		found := false
		if m.Model.ID != nil {
			if found, err = j.lookup.ModelExists(ctx, decl.Table, decl.ModelKey(), m.Model.ID); err != nil {
				return fmt.Errorf("looking up %s %v in %s: %w", m.Model.Class, m.Model.ID, decl.Table, err)
			}
		}
		if !found {
			return &ModelNotFoundError{Class: m.Model.Class}
		}
	}
	return nil
}
