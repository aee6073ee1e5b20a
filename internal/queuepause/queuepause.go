// Package queuepause reads the queue pauses Laravel keeps in the app's
// default cache store, so every reader (the worker, the dashboard,
// `laraworker size`) sees them as `php artisan queue:work` does.
//
// `php artisan queue:pause connection:queue` (Laravel 12.40+,
// QueueManager::pause/pauseFor) stores `illuminate:queue:paused:<connection>:<queue>`
// = true, forever or for a TTL; `queue:continue` (queue:resume) forgets it.
// `queue:pause --all` (13.25+, pauseAll) stores `illuminate:queues:paused`
// = true, which pauses every queue of every connection; `queue:resume
// --all` forgets it and leaves the per-queue pauses as they are. A
// worker skips a paused queue at each pop (Worker::getNextJob,
// QueueManager::getPausedQueues): it does not sleep on it.
//
// A value counts as PHP casts it to bool: `b:1;` pauses, `b:0;`, `0`, ""
// and a value PHP cannot unserialize do not.
package queuepause

import (
	"context"
	"errors"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// AllKey is the key of `queue:pause --all` (Laravel 13.25+).
const AllKey = "illuminate:queues:paused"

// QueueKey is the key of `queue:pause connection:queue` (Laravel 12.40+).
// connection is the queue connection's name as artisan names it
// (config/queue.php), queue the queue's name as the worker was given it
// (before any Queue::forward).
func QueueKey(connection, queue string) string {
	return "illuminate:queue:paused:" + connection + ":" + queue
}

// State is what Laravel's pauses hold for some queues of one connection.
type State struct {
	// All is `queue:pause --all`: every queue is paused.
	All bool
	// Queues are the queues asked about that are paused, one by one or by
	// All, in the order asked.
	Queues []string
}

// Paused reports whether queue is paused.
func (s State) Paused(queue string) bool {
	for _, q := range s.Queues {
		if q == queue {
			return true
		}
	}
	return false
}

// Read reads the pauses of queues on connection from cache, as
// QueueManager::getPausedQueues does: the global key first, then each
// queue's key. A nil cache holds no pause. On an error the state read so
// far is returned with it.
func Read(ctx context.Context, cache jobqueue.Cache, connection string, queues []string) (State, error) {
	var st State
	if cache == nil {
		return st, nil
	}
	all, err := isSet(ctx, cache, AllKey)
	if err != nil {
		return st, err
	}
	if all {
		st.All = true
		st.Queues = dedupe(queues)
		return st, nil
	}
	var errs []error
	for _, q := range dedupe(queues) {
		on, err := isSet(ctx, cache, QueueKey(connection, q))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if on {
			st.Queues = append(st.Queues, q)
		}
	}
	return st, errors.Join(errs...)
}

func isSet(ctx context.Context, cache jobqueue.Cache, key string) (bool, error) {
	v, ok, err := cache.Get(ctx, key)
	if err != nil || !ok {
		return false, err
	}
	return Truthy(v), nil
}

// Truthy is PHP's (bool) of a cache value, serialized as the store keeps
// it: what PHP cannot unserialize reads as false (unserialize() returns
// false), as do null, false, 0, 0.0, "", "0" and an empty array.
func Truthy(serialized []byte) bool {
	v, err := phpserialize.Unserialize(serialized)
	if err != nil {
		return false
	}
	v = v.Deref()
	switch v.Kind {
	case phpserialize.KindNull:
		return false
	case phpserialize.KindBool:
		return v.Bool
	case phpserialize.KindInt:
		return v.Int != 0
	case phpserialize.KindFloat:
		return v.Float != 0
	case phpserialize.KindString:
		s := string(v.Str)
		return s != "" && s != "0"
	case phpserialize.KindArray:
		return len(v.Entries) > 0
	}
	return true
}

func dedupe(queues []string) []string {
	out := make([]string, 0, len(queues))
	seen := make(map[string]bool, len(queues))
	for _, q := range queues {
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}
