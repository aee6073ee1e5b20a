package dashboard

import (
	"net/http"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
)

// The recent jobs page: the last jobs the workers finished, newest first,
// from laraworker's recent jobs table (each worker's ring of its last
// fleet.RecentPerWorker jobs, written with its heartbeat).

// recentShown is how many recent jobs the page lists.
const recentShown = 100

type recentData struct {
	Class string
	Rows  []recentRow
	Err   string
}

type recentRow struct {
	fleet.RecentJob
	Finished   time.Time
	Run, Wait  time.Duration
	WorkerName string // name (host:pid), or the row id when the worker is gone
}

func (s *Server) recent(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Recent jobs", "recent"
	d := recentData{Class: r.URL.Query().Get("class")}
	ctx, cancel := requestCtx(r)
	defer cancel()
	jobs, err := s.opt.Fleet.Recent(ctx, recentShown, d.Class)
	if err != nil {
		d.Err = s.clean(err.Error())
		v.Data = d
		return "recent", nil
	}
	names := map[string]string{}
	for _, wr := range v.Sum.Workers {
		names[wr.ID] = workerLabel(wr)
	}
	for _, j := range jobs {
		row := recentRow{RecentJob: j, Finished: time.Unix(j.FinishedAt, 0), Run: time.Duration(j.RunMS) * time.Millisecond,
			Wait: time.Duration(j.WaitMS) * time.Millisecond, WorkerName: names[j.Worker]}
		if row.WorkerName == "" {
			row.WorkerName = j.Worker
		}
		d.Rows = append(d.Rows, row)
	}
	v.Data = d
	return "recent", nil
}
