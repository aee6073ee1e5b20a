package snapshot

import (
	"time"

	"github.com/laraworker/laraworker/fleet"
	"github.com/laraworker/laraworker/worker"
)

// Export sets the queue and fleet gauges from a summary.
func (sum *Summary) Export(m *worker.QueueMetrics, now time.Time) {
	m.Depth.Reset()
	m.OldestReady.Reset()
	for _, q := range sum.Queues {
		m.Depth.WithLabelValues(q.Queue, "ready").Set(float64(q.Ready))
		m.Depth.WithLabelValues(q.Queue, "delayed").Set(float64(q.Delayed))
		m.Depth.WithLabelValues(q.Queue, "reserved").Set(float64(q.Reserved))
		m.Depth.WithLabelValues(q.Queue, "expired").Set(float64(q.Expired))
		m.OldestReady.WithLabelValues(q.Queue).Set(q.OldestReady.Seconds())
	}
	m.Failed.Reset()
	for _, f := range sum.FailedByQueue {
		m.Failed.WithLabelValues(f.Name).Set(float64(f.Count))
	}
	byKind := map[string]int{fleet.KindGo: 0, fleet.KindPHP: 0}
	held := sum.Held()
	var last int64
	for _, w := range sum.Workers {
		last = max(last, w.LastSeenAt)
		if Alive(WorkerState(w, held, now)) {
			byKind[w.Kind]++
		}
	}
	for kind, n := range byKind {
		m.Workers.WithLabelValues(kind).Set(float64(n))
	}
	m.LastSeen.Set(float64(last))
}
