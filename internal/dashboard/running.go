package dashboard

import (
	"net/http"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
)

// Running now: every reserved job, with the worker whose row names it.

type runningRow struct {
	snapshot.ReservedJob
	RunningFor time.Duration
	Worker     string // the worker whose row names it (Go, or PHP with the bridge's recorder), or "unknown"
}

func (s *Server) running(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Running now", "running"
	type holder struct {
		label string
		since int64
	}
	holders := map[string]holder{}
	for _, wr := range v.Sum.Workers {
		if wr.StoppedAt != nil {
			continue
		}
		for _, j := range wr.Running {
			for _, k := range snapshot.RunningKeys(j) {
				holders[k] = holder{workerLabel(wr), j.Since}
			}
		}
	}
	var rows []runningRow
	for _, j := range v.Sum.Reserved {
		h, ok := holders[j.Key()]
		row := runningRow{ReservedJob: j, RunningFor: v.Sum.AsOf.Sub(j.ReservedAt), Worker: h.label}
		if !ok {
			row.Worker = "unknown"
		} else if j.ID == 0 && h.since > 0 {
			// A Redis reservation's time is its last extension: the
			// worker knows when the job started.
			row.RunningFor = v.Sum.AsOf.Sub(time.Unix(h.since, 0))
		}
		rows = append(rows, row)
	}
	v.Data = rows
	return "running", nil
}
