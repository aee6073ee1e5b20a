package dashboard

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// Sign-in sessions of a token dashboard, kept in memory: a session is a
// random id in the browser's cookie, valid until it is signed out, idle
// for too long, or too old, whichever comes first. A process restart
// ends them all.

// Session defaults (Options.SessionIdle, Options.SessionLifetime).
const (
	DefaultSessionIdle     = 30 * time.Minute
	DefaultSessionLifetime = 12 * time.Hour
)

// maxSessions bounds the memory sessions take: only the token's holder
// makes them, but a script signing in in a loop must not grow the map.
const maxSessions = 1000

type sessions struct {
	mu         sync.Mutex
	now        func() time.Time
	idle, life time.Duration
	// live is keyed by the SHA-256 of the id, so how long a lookup takes
	// says nothing about the ids.
	live map[[32]byte]*session
}

type session struct{ created, seen time.Time }

func newSessions(now func() time.Time, idle, life time.Duration) *sessions {
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	if life <= 0 {
		life = DefaultSessionLifetime
	}
	return &sessions{now: now, idle: idle, life: life, live: map[[32]byte]*session{}}
}

func (ss *sessions) expired(s *session, now time.Time) bool {
	return now.Sub(s.seen) >= ss.idle || now.Sub(s.created) >= ss.life
}

// create starts a session and returns its id (64 hex digits).
func (ss *sessions) create() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	id := hex.EncodeToString(b)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	if len(ss.live) >= maxSessions {
		ss.sweep(now)
	}
	ss.live[sha256.Sum256([]byte(id))] = &session{created: now, seen: now}
	return id
}

// sweep drops expired sessions, then, if still full, the least recently
// used one.
func (ss *sessions) sweep(now time.Time) {
	var oldest [32]byte
	var oldestSeen time.Time
	for k, s := range ss.live {
		if ss.expired(s, now) {
			delete(ss.live, k)
		} else if oldestSeen.IsZero() || s.seen.Before(oldestSeen) {
			oldest, oldestSeen = k, s.seen
		}
	}
	if len(ss.live) >= maxSessions {
		delete(ss.live, oldest)
	}
}

// touch reports whether id is a live session, and marks it used now.
func (ss *sessions) touch(id string) bool {
	if id == "" {
		return false
	}
	k := sha256.Sum256([]byte(id))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.live[k]
	if s == nil {
		return false
	}
	now := ss.now()
	if ss.expired(s, now) {
		delete(ss.live, k)
		return false
	}
	s.seen = now
	return true
}

// end signs a session out.
func (ss *sessions) end(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.live, sha256.Sum256([]byte(id)))
}
