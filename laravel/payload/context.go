package payload

import (
	"encoding/json"
	"fmt"

	"github.com/laraworker/laraworker/internal/phparray"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// ContextKey is the payload key Laravel 11+'s Context adds (when the
// context is not empty): {"data": {k: serialize(v)}, "hidden": {...}}.
const ContextKey = "illuminate:log:context"

// UniqueLock is the unique-job lock that Laravel 11.39+ names in a
// payload's hidden context when a ShouldBeUnique job is dispatched (so a
// worker can release it even when the job cannot be unserialized).
type UniqueLock struct {
	// Key is the lock name before the cache store's prefix, e.g.
	// "laravel_unique_job:App\Jobs\UniqueJob:1".
	Key string
	// Store is the cache store, by its config/cache.php name.
	Store string
	// Owner is the lock owner (Laravel 13.24+), "" when released by key.
	Owner string
}

// UniqueLock reads laravel_unique_job_key, laravel_unique_job_cache_store
// and laravel_unique_job_lock_owner from the hidden context; ok is false
// when the payload names no lock.
func (p *Payload) UniqueLock() (lock UniqueLock, ok bool, err error) {
	hidden, err := p.hiddenContext()
	if err != nil || hidden == nil {
		return UniqueLock{}, false, err
	}
	read := func(name string) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = contextString(hidden[name])
		if err != nil {
			err = &PayloadError{Key: ContextKey + ".hidden." + name, Msg: err.Error()}
		}
		return s
	}
	lock = UniqueLock{Key: read("laravel_unique_job_key"), Store: read("laravel_unique_job_cache_store"), Owner: read("laravel_unique_job_lock_owner")}
	if err != nil {
		return UniqueLock{}, false, err
	}
	return lock, lock.Key != "" && lock.Store != "", nil
}

// hiddenContext is the "hidden" object of the context, nil or empty when
// absent or empty (PHP writes an empty one as [], and so does queue:retry
// an empty context).
func (p *Payload) hiddenContext() (map[string]json.RawMessage, error) {
	raw, ok := p.Extra[ContextKey]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var ctx struct {
		Hidden map[string]json.RawMessage `json:"hidden"`
	}
	if err := phparray.Unmarshal(raw, &ctx); err != nil {
		return nil, &PayloadError{Key: ContextKey, Msg: "want an object with data and hidden"}
	}
	return ctx.Hidden, nil
}

// contextString reads one context value: a JSON string holding a
// serialized PHP string (or null). Absent is "".
func contextString(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var serialized string
	if err := json.Unmarshal(raw, &serialized); err != nil {
		return "", fmt.Errorf("want a serialized PHP value, got %s", jsonKind(raw))
	}
	v, err := phpserialize.Unserialize([]byte(serialized))
	if err != nil {
		return "", err
	}
	switch v.Kind {
	case phpserialize.KindString:
		return string(v.Str), nil
	case phpserialize.KindNull:
		return "", nil
	}
	return "", fmt.Errorf("want a string, got PHP %s", v.Kind)
}
