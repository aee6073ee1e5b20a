package dashboard

import (
	"net/http"
	"slices"
	"strings"

	"github.com/laraworker/laraworker/internal/fleet"
)

// The control page: pause and resume Go workers, per worker or queue.

type controlData struct {
	Workers []workerRow
	Queues  []controlQueue
}

type controlQueue struct {
	Name   string
	Paused bool
	// LaravelPaused: Laravel's queue:pause holds it (every worker); the
	// Resume button here does not lift it: php artisan queue:continue does.
	LaravelPaused bool
	// GoWorkers counts the running Go workers that watch the queue.
	GoWorkers int
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
	watching := map[string]int{}
	for _, wr := range d.Workers {
		for _, q := range wr.Queues {
			watching[q]++
		}
	}
	// Every queue seen, empty ones too: a pause can be set on a queue
	// before its jobs come.
	for _, n := range s.queues.of(v.Sum) {
		d.Queues = append(d.Queues, controlQueue{Name: n, Paused: paused[n], GoWorkers: watching[n]})
	}
	for _, n := range v.Sum.LaravelPaused {
		if !slices.ContainsFunc(d.Queues, func(q controlQueue) bool { return q.Name == n }) {
			d.Queues = append(d.Queues, controlQueue{Name: n, GoWorkers: watching[n]})
		}
	}
	for i := range d.Queues {
		d.Queues[i].LaravelPaused = slices.Contains(v.Sum.LaravelPaused, d.Queues[i].Name)
	}
	slices.SortFunc(d.Queues, func(a, b controlQueue) int { return strings.Compare(a.Name, b.Name) })
	v.Data = d
	return "control", nil
}
