// Package onceset remembers what a long-running worker has already said,
// so a warning about a class or a store is logged once, not on every job.
package onceset

import "sync"

// Set remembers keys, bounded: a worker meets an unbounded number of
// classes over its life; past the bound, nothing more is said. The zero
// value is ready to use.
type Set struct {
	mu   sync.Mutex
	seen map[string]bool
}

// max bounds the keys remembered.
const max = 4096

// Has reports whether key was marked.
func (o *Set) Has(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen[key]
}

// Once reports whether key is new (and marks it).
func (o *Set) Once(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen[key] {
		return false
	}
	return o.add(key)
}

// OnceFor is Once(topic + "\x00" + name) for a question asked of every
// job: the key is built on the stack, and a string of it is made only the
// first time.
func (o *Set) OnceFor(topic, name string) bool {
	var buf [128]byte
	key := append(append(append(buf[:0], topic...), 0), name...)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen[string(key)] { // looked up without a copy
		return false
	}
	return o.add(string(key))
}

// add marks a key not marked yet, within the bound; o.mu is held.
func (o *Set) add(key string) bool {
	if len(o.seen) >= max {
		return false
	}
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	o.seen[key] = true
	return true
}
