package dashboard

import (
	"net/http"
	"slices"
	"strings"

	"github.com/laraworker/laraworker/fleet"
)

// The control page: pause and resume Go workers, per worker or queue.

type controlData struct {
	Workers []workerRow
	Queues  []controlQueue
}

type controlQueue struct {
	Name   string
	Paused bool
}

func (s *Server) control(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Control", "control"
	d := controlData{}
	for _, wr := range workerRows(v.Sum, v.Now) {
		if wr.Kind == fleet.KindGo && wr.State != "stopped" {
			d.Workers = append(d.Workers, wr)
		}
	}
	paused := pausedQueues(v.Sum)
	names := map[string]bool{}
	for _, q := range v.Sum.Queues {
		names[q.Queue] = true
	}
	for _, wr := range d.Workers {
		for _, q := range wr.Queues {
			names[q] = true
		}
	}
	for q := range paused {
		names[q] = true
	}
	for n := range names {
		d.Queues = append(d.Queues, controlQueue{Name: n, Paused: paused[n]})
	}
	slices.SortFunc(d.Queues, func(a, b controlQueue) int { return strings.Compare(a.Name, b.Name) })
	v.Data = d
	return "control", nil
}
