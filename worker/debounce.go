package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/phphash"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/worker/internal/configproblem"
)

// #[DebounceFor] (Laravel 13.6+). Each dispatch of a debounced class
// overwrites the cache key laravel_debounced_job:<name>:<id> with a fresh
// owner token and carries that token in the command's public property
// debounceOwner (Bus/DebounceLock.php). CallQueuedHandler::call, once the
// command is unserialized and before its middleware, compares them
// (commandShouldBeDebounced): a job whose owner is no longer the key's
// was superseded by a newer dispatch and is deleted without running: no
// handler, no chain link, no batch count, no unique lock (JobDebounced
// fires in PHP; the worker logs it). A missing key (expired after its
// TTL, or evicted) runs the job: Laravel fails open. The key is never
// released after a run; it expires by its TTL, so Go leaves it alone.

// reasonDebounced is the outcome of a superseded dispatch.
const reasonDebounced = "debounced"

// debounceKeyPrefix starts every debounce key (DebounceLock::getKey).
const debounceKeyPrefix = "laravel_debounced_job:"

// debounce is commandShouldBeDebounced: stop is true when the job must not
// run, with its outcome (deleted as superseded, given back to PHP when Go
// cannot read the owner, or a job exception when the cache fails, as the
// exception PHP's cache read would throw).
func (e *jobExecutor) debounce() (out outcome, stop bool) {
	if e.payload.Data.Command == "" {
		return outcome{}, false
	}
	cmd, err := e.job.Command()
	if err != nil {
		return outcome{}, false
	}
	owner := debounceOwner(cmd)
	if owner == "" {
		return outcome{}, false
	}
	class := e.className()
	read, keys, err := e.debounceReader(cmd)
	if err != nil {
		return e.debounceUnknowable(class, err), true
	}
	current, found, err := firstOwner(e.ctx, read, keys)
	switch {
	case err != nil:
		return e.onException(fmt.Errorf("reading the debounce owner of %s: %w", class, err), frame{File: "laraworker", Func: "debounce"}), true
	case !found || current == owner:
		e.problems.ClearClass(configproblem.KindDebounce, class)
		return outcome{}, false
	}
	e.log.Info().Str("uuid", e.payload.UUID).Str("class", class).Str("key", keys[0]).
		Msg("debounced: a newer dispatch superseded this job; deleted without running, as Laravel does (JobDebounced)")
	return outcome{verdict: verdictDelete, reason: reasonDebounced}, true
}

// debounceOwner is Queueable::$debounceOwner: the token of the dispatch
// that queued the job ("" when the class is not debounced, the property
// then holding its default, left out of the payload).
func debounceOwner(cmd *payload.Command) string {
	v, err := cmd.Object.PropKey("debounceOwner")
	if err != nil || v == nil || v.Kind != phpserialize.KindString {
		return ""
	}
	return string(v.Str)
}

// ownerReader reads one key's value, serialized, in the class's store.
type ownerReader func(ctx context.Context, key string) ([]byte, bool, error)

// debounceReader finds the store the class's owner lives in and the keys
// to read there, in order: the key DebounceLock::getKey makes, and for a
// class named by its own class name, also the key of a displayName()
// returning that same name (hashed with xxh128).
func (e *jobExecutor) debounceReader(cmd *payload.Command) (ownerReader, []string, error) {
	decl := e.job.Class().Debounce
	id, err := debounceID(cmd, decl)
	if err != nil {
		return nil, nil, err
	}
	commandName := e.payload.Data.CommandName
	if commandName == "" {
		commandName = cmd.Class()
	}
	var keys []string
	if d := e.payload.DisplayName; d != "" && d != commandName {
		keys = []string{debounceKeyPrefix + phphash.XXH128(d) + ":" + id}
	} else {
		keys = []string{debounceKeyPrefix + commandName + ":" + id, debounceKeyPrefix + phphash.XXH128(commandName) + ":" + id}
	}
	store := ""
	if decl != nil {
		store = decl.Store
	}
	read, err := e.ownerStore(store)
	return read, keys, err
}

// debounceID is the id part of the key: the registration's DebounceID
// (the class's debounceId()), else the command's public debounceId
// property (a queued listener's carries its listener's id), else "".
func debounceID(cmd *payload.Command, decl *handlers.Debounce) (string, error) {
	if decl != nil && decl.ID != nil {
		id, err := decl.ID(cmd)
		if err != nil {
			return "", fmt.Errorf("debounceId: %w", err)
		}
		return id, nil
	}
	v, err := cmd.Object.PropKey("debounceId")
	if err != nil {
		return "", nil // no public property: DebounceLock uses ''
	}
	id, err := handlers.PHPString(v)
	if err != nil {
		return "", fmt.Errorf("the command's debounceId: %w (declare handlers.DebounceID on the registration)", err)
	}
	return id, nil
}

// ownerStore is the cache store named (the app's default store for ""),
// as far as Go reaches it.
func (e *jobExecutor) ownerStore(name string) (ownerReader, error) {
	if name == "" || name == e.cfg.CacheStore {
		if e.cfg.Cache == nil {
			return nil, errors.New("the app's default cache store is not one Go shares with PHP (only database and redis are)")
		}
		return e.cfg.Cache.Get, nil
	}
	st, ok := e.cfg.StateStores[name]
	if !ok || st.Cache == nil {
		return nil, fmt.Errorf("debounceVia() names the %s cache store, which Go does not reach (only database and redis stores are)", name)
	}
	return func(ctx context.Context, key string) ([]byte, bool, error) {
		return st.Cache.Get(ctx, st.Prefix+key)
	}, nil
}

// firstOwner reads keys in order and returns the first one's owner
// (DebounceLock::getCurrentOwner).
func firstOwner(ctx context.Context, read ownerReader, keys []string) (string, bool, error) {
	for _, key := range keys {
		raw, ok, err := read(ctx, key)
		if err != nil {
			return "", false, err
		}
		if owner, isNull := phpOwner(raw); ok && !isNull {
			return owner, true, nil
		}
	}
	return "", false, nil
}

// phpOwner is the cached owner as PHP's strict comparison sees it: the
// string it holds; anything else never equals a job's token. A stored
// null is no owner at all (isNull: PHP's get() returns null, as for a
// missing key).
func phpOwner(raw []byte) (owner string, isNull bool) {
	v, err := phpserialize.Unserialize(raw)
	switch {
	case err != nil:
		return "\x00unreadable", false // unserialize() gives false
	case v.Kind == phpserialize.KindNull:
		return "", true
	case v.Kind != phpserialize.KindString:
		return "\x00not a string", false
	}
	return string(v.Str), false
}

// debounceUnknowable gives a debounced job back to PHP workers when Go
// cannot tell whether it was superseded: running it could run a dispatch
// Laravel would skip.
func (e *jobExecutor) debounceUnknowable(class string, err error) outcome {
	e.problems.Report(&configproblem.Error{Kind: configproblem.KindDebounce, Class: class,
		Err: fmt.Errorf("#[DebounceFor] job: Go cannot read its debounce owner: %w", err)})
	e.log.Warn().Str("uuid", e.payload.UUID).Str("class", class).Err(err).
		Msg("job given back to PHP workers: Go cannot tell whether a newer dispatch superseded it (#[DebounceFor])")
	return outcome{verdict: verdictUnreserve, reason: "debounce_unknowable"}
}
