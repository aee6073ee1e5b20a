package worker

import (
	"github.com/laraworker/laraworker/payload"
	"github.com/laraworker/laraworker/worker/internal/uniquelock"
)

// UniqueLockKey is UniqueLock::getKey for the app's Laravel version.
// displayName is the payload's (displayName() when the class has the
// method): 12.54+ hashes it with xxh128 when it differs from the class.
func UniqueLockKey(version, commandName, displayName, uniqueID string) string {
	return uniquelock.Key(version, commandName, displayName, uniqueID)
}

// OwnsUniqueKey reports whether a lock key is the job's own: named after
// its class (11.x-12.53) or after the xxh128 of its displayName (12.54+).
func OwnsUniqueKey(p *payload.Payload, key string) bool { return uniquelock.OwnsKey(p, key) }
