package dashboard

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/jobqueue"
)

// The overview: per queue its counts and failures, and the fleet of
// workers.

type overviewData struct {
	Queues  []queueRow
	Workers []workerRow
	// ShowStopped lists stopped workers too (?stopped=1); Stopped counts
	// them, shown or not.
	ShowStopped bool
	Stopped     int
	Self        string // this page's URL, for the live refresh
	// Left are the jobs the worker's claims leave in place for PHP
	// workers (Options.Left).
	Left []jobqueue.LeftJobs
	// StrandedTitle explains the stranded mark.
	StrandedTitle string
}

type queueRow struct {
	snapshot.QueueCounts
	Failed int64
	// Paused is laraworker's pause (Go workers); LaravelPaused is
	// Laravel's queue:pause (every worker).
	Paused, LaravelPaused bool
	// Stranded: its ready jobs wait for nobody (stranded.go).
	Stranded bool
}

type workerRow struct {
	fleet.WorkerRow
	State    string // running, busy, paused, stopped, lost (snapshot.WorkerState)
	LastSeen time.Time
	Started  time.Time
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Overview", "overview"
	d := overviewData{ShowStopped: r.URL.Query().Get("stopped") == "1"}
	d.Self = link("/", "stopped", map[bool]string{true: "1"}[d.ShowStopped])
	for _, wr := range workerRows(v.Sum, v.Now) {
		if wr.State == "stopped" {
			d.Stopped++
			if !d.ShowStopped {
				continue
			}
		}
		d.Workers = append(d.Workers, wr)
	}
	failed := map[string]int64{}
	for _, f := range v.Sum.FailedByQueue {
		failed[f.Name] = f.Count
	}
	counts := map[string]snapshot.QueueCounts{}
	for _, q := range v.Sum.Queues {
		counts[q.Queue] = q
	}
	paused, stranded := pausedQueues(v.Sum), strandedQueues(v.Sum, v.Now)
	// Every queue seen, empty ones too (zeros): a queue that drains does
	// not vanish from the page.
	for _, name := range s.queues.of(v.Sum) {
		c, ok := counts[name]
		if !ok {
			c = snapshot.QueueCounts{Queue: name}
		}
		d.Queues = append(d.Queues, queueRow{QueueCounts: c, Failed: failed[name], Paused: paused[name], Stranded: stranded[name]})
	}
	for _, n := range v.Sum.LaravelPaused {
		if !slices.ContainsFunc(d.Queues, func(q queueRow) bool { return q.Queue == n }) {
			d.Queues = append(d.Queues, queueRow{QueueCounts: snapshot.QueueCounts{Queue: n}, Failed: failed[n]})
		}
	}
	for i := range d.Queues {
		d.Queues[i].LaravelPaused = slices.Contains(v.Sum.LaravelPaused, d.Queues[i].Queue)
	}
	slices.SortFunc(d.Queues, func(a, b queueRow) int { return strings.Compare(a.Queue, b.Queue) })
	if s.opt.Left != nil {
		d.Left = s.opt.Left()
	}
	d.StrandedTitle = strandedTitle
	v.Data = d
	return "overview", nil
}

func pausedQueues(sum *snapshot.Summary) map[string]bool {
	out := map[string]bool{}
	for _, p := range sum.Pauses {
		if p.Scope == fleet.ScopeQueue {
			out[p.Target] = true
		}
	}
	return out
}

func workerRows(sum *snapshot.Summary, now time.Time) []workerRow {
	held := sum.Held()
	var out []workerRow
	for _, wr := range sum.Workers {
		out = append(out, workerRow{WorkerRow: wr, State: snapshot.WorkerState(wr, held, now),
			LastSeen: time.Unix(wr.LastSeenAt, 0), Started: time.Unix(wr.StartedAt, 0)})
	}
	return out
}

// workerLabel names a worker as the pages do: "name (host:pid)".
func workerLabel(wr fleet.WorkerRow) string {
	return wr.Name + " (" + wr.Host + ":" + strconv.FormatInt(wr.PID, 10) + ")"
}
