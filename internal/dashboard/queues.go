package dashboard

import (
	"slices"
	"sync"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
)

// knownQueues are the queue names the dashboard has seen since it
// started: a queue that drains stays listed on the Overview and Control
// pages (with zeros), where a person looks for it, instead of
// disappearing with its last job.
type knownQueues struct {
	mu    sync.Mutex
	names map[string]bool
}

// maxKnownQueues bounds the names kept: queue names come from the jobs
// table, which whoever can write it controls.
const maxKnownQueues = 1000

// of is every queue a page lists: those with jobs or failed jobs now,
// those paused, those a worker (running or stopped, Go or PHP) watches,
// and those seen before; sorted.
func (k *knownQueues) of(sum *snapshot.Summary) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.names == nil {
		k.names = map[string]bool{}
	}
	add := func(name string) {
		if name != "" && (len(k.names) < maxKnownQueues || k.names[name]) {
			k.names[name] = true
		}
	}
	for _, q := range sum.Queues {
		add(q.Queue)
	}
	for _, f := range sum.FailedByQueue {
		add(f.Name)
	}
	for _, p := range sum.Pauses {
		if p.Scope == fleet.ScopeQueue {
			add(p.Target)
		}
	}
	for _, w := range sum.Workers {
		for _, q := range w.Queues {
			add(q)
		}
	}
	out := make([]string, 0, len(k.names))
	for n := range k.names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
