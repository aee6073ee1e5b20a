package snapshot

import (
	"strconv"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
)

// The state of a fleet's worker, as the pages and the gauges tell it,
// and which reserved job a worker's row names.

// AliveFor is how long after its last heartbeat a worker counts as lost.
const AliveFor = 30 * time.Second

// Key names a reserved job the way a worker's row can name it: by the
// jobs table's id, or (a Redis job, which has no number) by its uuid.
func (j ReservedJob) Key() string {
	if j.ID != 0 {
		return "#" + strconv.FormatInt(j.ID, 10)
	}
	return "u:" + j.UUID
}

// RunningKeys are the keys a job a worker's row names may match: the
// worker's id of it (the row id on a database queue, its own count on
// Redis) and its uuid.
func RunningKeys(j fleet.RunningJob) []string {
	out := []string{"#" + strconv.FormatInt(j.ID, 10)}
	if j.UUID != "" {
		out = append(out, "u:"+j.UUID)
	}
	return out
}

// Held are the keys of the jobs reserved within retry_after.
type Held map[string]bool

// Held lists the jobs the summary shows reserved within retry_after.
func (sum *Summary) Held() Held {
	held := make(Held, len(sum.Reserved))
	for _, j := range sum.Reserved {
		if !j.Expired {
			held[j.Key()] = true
		}
	}
	return held
}

func (h Held) holds(j fleet.RunningJob) bool {
	for _, k := range RunningKeys(j) {
		if h[k] {
			return true
		}
	}
	return false
}

// WorkerState is stopped, lost (no heartbeat for AliveFor), paused or
// running; and busy for a PHP worker silent past AliveFor whose row names
// a job still reserved within retry_after: PHP runs one job at a time and
// writes nothing until it ends, so a long job is not a lost worker. A Go
// worker beats while its jobs run: silent, it is lost.
func WorkerState(wr fleet.WorkerRow, held Held, now time.Time) string {
	switch {
	case wr.StoppedAt != nil:
		return "stopped"
	case now.Sub(time.Unix(wr.LastSeenAt, 0)) <= AliveFor && wr.Paused:
		return "paused"
	case now.Sub(time.Unix(wr.LastSeenAt, 0)) <= AliveFor:
		return "running"
	case wr.Kind == fleet.KindPHP && len(wr.Running) == 1 && held.holds(wr.Running[0]):
		return "busy"
	}
	return "lost"
}

// Alive is whether a worker in state counts as alive (the fleet gauge).
func Alive(state string) bool { return state == "running" || state == "busy" || state == "paused" }
