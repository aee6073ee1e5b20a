package dashboard

import (
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
)

// A ready job on a queue that no live worker watches waits for nobody: the
// pages show it as stranded, not as an ordinary ready job. Go workers
// always report the queues they watch; PHP workers only when the bridge's
// fleet option records them, so a queue must also have waited a while
// (strandedAfter) before it is called stranded: a queue served by PHP
// workers that do not report drains long before.

// strandedAfter is how long a ready job waits on an unwatched queue
// before the pages call it stranded.
const strandedAfter = time.Minute

// strandedTitle explains the mark.
const strandedTitle = "no live worker watches this queue (Go workers always report theirs; PHP workers when the bridge's fleet option is on), and its oldest ready job has waited over a minute: start a worker on it, or move its jobs (laraworker move)"

// watchedQueues are the queues some live worker watches.
func watchedQueues(sum *snapshot.Summary, now time.Time) map[string]bool {
	held := sum.Held()
	out := map[string]bool{}
	for _, wr := range sum.Workers {
		if snapshot.Alive(snapshot.WorkerState(wr, held, now)) {
			for _, q := range wr.Queues {
				out[q] = true
			}
		}
	}
	return out
}

// strandedQueues are the queues whose oldest ready job has waited over
// strandedAfter while no live worker watches them.
func strandedQueues(sum *snapshot.Summary, now time.Time) map[string]bool {
	watched := watchedQueues(sum, now)
	out := map[string]bool{}
	for _, q := range sum.Queues {
		if q.Ready > 0 && q.OldestReady > strandedAfter && !watched[q.Queue] {
			out[q.Queue] = true
		}
	}
	return out
}

// strandedJob: a ready job (not reserved, available) that has waited over
// strandedAfter on a stranded queue.
func strandedJob(stranded map[string]bool, r snapshot.JobRow, now time.Time) bool {
	return stranded[r.Queue] && r.ReservedAt == nil && !r.AvailableAt.IsZero() && now.Sub(r.AvailableAt) > strandedAfter
}
