// Package uniquelock finds and releases the locks of Laravel's
// ShouldBeUnique jobs.
//
// A ShouldBeUnique job holds a lock in the app's cache from dispatch until
// its worker releases it; while it is held, Laravel silently drops every
// new dispatch of the same job. CallQueuedHandler releases it when the job
// is done (not released) or has failed, and a ShouldBeUniqueUntilProcessing
// job just before it runs. A Go worker must do the same, or the class's
// next dispatches vanish until the lock's uniqueFor expires.
//
// Which lock: Laravel 11.39+ writes its key and store into the payload's
// hidden context (payload.UniqueLock); before that the key is computed from
// the class and the uniqueId the registration declares, in the version's
// form (8-10 "laravel_unique_job:<class><id>", 11+ with ":" between, 12.54+
// with xxh128 of displayName()).
package uniquelock

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/internal/phphash"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/worker/internal/onceset"
	"github.com/rs/zerolog"
)

// uniqueKeyPrefix starts every unique-job lock name.
const uniqueKeyPrefix = "laravel_unique_job:"

// Ref is one lock to release.
type Ref struct {
	Key, Store, Owner string
}

// Locks finds and releases unique jobs' locks in the stores Go reaches,
// and names, once per class and store, the locks it cannot.
type Locks struct {
	// Stores are the lock stores by cache store name; DefaultStore is the
	// app's default cache store; Version is the app's Laravel version.
	Stores                map[string]jobqueue.LockStore
	DefaultStore, Version string
	Log                   zerolog.Logger
	Clock                 clock.Clock

	warned onceset.Set
}

// once reports whether key is new (and marks it).
func (u *Locks) once(key string) bool { return u.warned.Once(key) }

// CheckClasses runs when the worker is built: registered ShouldBeUnique classes need the
// app's Laravel version for their lock key, and a store Go can reach; a
// class whose store it cannot reach is named once, loudly, because PHP
// will drop its dispatches while Go leaves its locks in place.
func (u *Locks) CheckClasses(reg *handlers.Registry) error {
	unique := reg.Unique()
	classes := make([]string, 0, len(unique))
	for class := range unique {
		classes = append(classes, class)
	}
	sort.Strings(classes)
	for _, class := range classes {
		if u.Version == "" {
			return fmt.Errorf("worker: %s is registered as ShouldBeUnique: set LaravelVersion (work --laravel-version) so its lock key is the one the app's Laravel writes", class)
		}
		store := u.storeOf(unique[class])
		if _, ok := u.Stores[store]; !ok {
			u.unreachable(class, store)
		}
	}
	return nil
}

func (u *Locks) storeOf(decl handlers.Unique) string {
	if decl.Store != "" {
		return decl.Store
	}
	return u.DefaultStore
}

// unreachable says, once per class and store, that Go cannot release the
// class's unique locks.
func (u *Locks) unreachable(class, store string) {
	if !u.once("store\x00" + class + "\x00" + store) {
		return
	}
	shown := store
	if shown == "" {
		shown = "(unknown: the app's CACHE_STORE/CACHE_DRIVER is not set)"
	}
	u.Log.Error().Str("class", class).Str("cache_store", shown).
		Msg("this ShouldBeUnique class keeps its lock in a cache store Go cannot reach (only database and redis are); the locks of jobs Go runs stay until uniqueFor expires and Laravel drops new dispatches of the class until then: keep the class on PHP workers or move its lock to the database or redis store")
}

// LockOf is the lock of a job: the one its payload names (Laravel
// 11.39+'s context), else the one the bridge recorded at dispatch
// (recorded), else the one its registration's uniqueId gives.
func (u *Locks) LockOf(p *payload.Payload, cmd *payload.Command, class handlers.Class, recorded *bridgeproto.Unique) (Ref, bool) {
	owner := commandLockOwner(cmd)
	if ref, ok := u.Named(p); ok {
		if owner != "" {
			ref.Owner = owner
		}
		return ref, true
	}
	if recorded != nil && recorded.Key != "" {
		ref := Ref{Key: recorded.Key, Store: recorded.Store, Owner: owner}
		if ref.Owner == "" && recorded.Owner != nil {
			ref.Owner = *recorded.Owner
		}
		if ref.Store == "" {
			ref.Store = u.DefaultStore
		}
		return ref, true
	}
	if class.Unique == nil {
		return Ref{}, false
	}
	id := ""
	if class.Unique.ID != nil {
		var err error
		if id, err = class.Unique.ID(cmd); err != nil {
			u.Log.Error().Err(err).Str("uuid", p.UUID).Str("class", p.Name()).Msg("cannot compute uniqueId; the unique lock is not released")
			return Ref{}, false
		}
	}
	commandName := p.Data.CommandName
	if commandName == "" {
		commandName = cmd.Class()
	}
	key := Key(u.Version, commandName, p.DisplayName, id)
	return Ref{Key: key, Store: u.storeOf(*class.Unique), Owner: owner}, true
}

// Named is the lock the payload's hidden context names, when it is this
// job's own: a job dispatched while another unique job ran inherits that
// job's context, whose lock is not its to release.
func (u *Locks) Named(p *payload.Payload) (Ref, bool) {
	lock, ok, err := p.UniqueLock()
	if err != nil {
		u.Log.Warn().Err(err).Str("uuid", p.UUID).Msg("the payload's unique-lock context is unreadable")
		return Ref{}, false
	}
	if !ok || !OwnsKey(p, lock.Key) {
		return Ref{}, false
	}
	return Ref{Key: lock.Key, Store: lock.Store, Owner: lock.Owner}, true
}

// commandLockOwner is Queueable::$uniqueLockOwner (Laravel 13.24+).
func commandLockOwner(cmd *payload.Command) string {
	if cmd == nil {
		return ""
	}
	v, err := cmd.Object.Prop("uniqueLockOwner")
	if err != nil {
		return ""
	}
	if v = v.Deref(); v != nil && len(v.Str) > 0 {
		return string(v.Str)
	}
	return ""
}

// Key is UniqueLock::getKey for the app's Laravel version.
// displayName is the payload's (displayName() when the class has the
// method): 12.54+ hashes it with xxh128 when it differs from the class.
func Key(version, commandName, displayName, uniqueID string) string {
	switch {
	case appconfig.VersionCompare(version, "11") < 0:
		return uniqueKeyPrefix + commandName + uniqueID
	case appconfig.VersionCompare(version, "12.54") < 0:
		return uniqueKeyPrefix + commandName + ":" + uniqueID
	}
	name := commandName
	if displayName != "" && displayName != commandName {
		name = phphash.XXH128(displayName)
	}
	return uniqueKeyPrefix + name + ":" + uniqueID
}

// OwnsKey reports whether a lock key is the job's own: named after
// its class (11.x-12.53) or after the xxh128 of its displayName (12.54+).
func OwnsKey(p *payload.Payload, key string) bool {
	rest, ok := strings.CutPrefix(key, uniqueKeyPrefix)
	if !ok {
		return false
	}
	for _, name := range []string{p.Data.CommandName, p.DisplayName} {
		if name != "" && (strings.HasPrefix(rest, name+":") || strings.HasPrefix(rest, phphash.XXH128(name)+":")) {
			return true
		}
	}
	return false
}

// Release releases one lock, retrying a failing store a few times: a
// lock left behind drops the class's dispatches until it expires, so the
// failure is logged as an error.
func (u *Locks) Release(ctx context.Context, p *payload.Payload, ref Ref) {
	store, ok := u.Stores[ref.Store]
	if !ok {
		u.unreachable(p.Name(), ref.Store)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var err error
	for attempt, wait := 0, 100*time.Millisecond; attempt < 4; attempt, wait = attempt+1, wait*3 {
		if ref.Owner != "" {
			err = store.ReleaseOwned(ctx, ref.Key, ref.Owner)
		} else {
			err = store.ForceRelease(ctx, ref.Key)
		}
		if err == nil || ctx.Err() != nil {
			break
		}
		clock.Sleep(ctx, u.Clock, wait)
	}
	if err != nil {
		u.Log.Error().Err(err).Str("uuid", p.UUID).Str("class", p.Name()).Str("cache_store", ref.Store).Str("lock", ref.Key).
			Msg("releasing the unique lock failed; Laravel drops new dispatches of this job until the lock expires")
		return
	}
	u.Log.Debug().Str("uuid", p.UUID).Str("lock", ref.Key).Str("cache_store", ref.Store).Msg("unique lock released")
}
