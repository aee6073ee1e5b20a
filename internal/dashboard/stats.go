package dashboard

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
)

// The metrics page: per queue and class, over the last hour or day, the
// jobs the workers finished (throughput, failures) and how long they ran
// and waited (median and 99th percentile), from laraworker's history
// table: one grouped read of its minute range.

type statsData struct {
	Span    string // "hour" or "day"
	Spans   []string
	Minutes int64
	Rows    []statsRow
	// Untimed is true when the history has no timing columns (tables of
	// an earlier version: `laraworker tables` adds them).
	Untimed bool
	Err     string
}

type statsRow struct {
	fleet.ClassStats
	PerMinute   float64
	FailedShare float64 // failed / jobs, in percent
	RunP50      string
	RunP99      string
	RunMean     string
	WaitP50     string
	WaitP99     string
	Timed       int64 // jobs with a runtime (those a worker of this version measured)
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Metrics", "stats"
	d := statsData{Span: "hour", Spans: []string{"hour", "day"}, Minutes: 60}
	if r.URL.Query().Get("span") == "day" {
		d.Span, d.Minutes = "day", 24*60
	}
	ctx, cancel := requestCtx(r)
	defer cancel()
	// The last Minutes minutes, the one under way included.
	since := v.Now.Unix()/60*60 - (d.Minutes-1)*60
	stats, err := s.opt.Fleet.ClassStats(ctx, since)
	if err != nil {
		d.Err = s.clean(err.Error())
		v.Data = d
		return "stats", nil
	}
	for _, c := range stats {
		row := statsRow{ClassStats: c, PerMinute: float64(c.Jobs()) / float64(d.Minutes), Timed: c.Run.Count()}
		if c.Jobs() > 0 {
			row.FailedShare = 100 * float64(c.Failed) / float64(c.Jobs())
		}
		row.RunP50, row.RunP99 = quantile(c.Run, 0.5), quantile(c.Run, 0.99)
		row.WaitP50, row.WaitP99 = quantile(c.Wait, 0.5), quantile(c.Wait, 0.99)
		if row.Timed > 0 {
			// The total is of whole milliseconds: a mean under one is noise.
			row.RunMean = shortDuration(c.Run.Mean().Round(time.Millisecond))
		}
		d.Untimed = d.Untimed || !c.Timed
		d.Rows = append(d.Rows, row)
	}
	slices.SortFunc(d.Rows, func(a, b statsRow) int {
		return cmp.Or(cmp.Compare(b.Jobs(), a.Jobs()), cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Class, b.Class))
	})
	v.Data = d
	return "stats", nil
}

// quantile says "≤ 250ms" (the bucket's bound), "> 1h" or "–".
func quantile(h fleet.Histogram, q float64) string {
	d, over, ok := h.Quantile(q)
	switch {
	case !ok:
		return "–"
	case over:
		return "> " + shortDuration(d)
	}
	return "≤ " + shortDuration(d)
}

// shortDuration writes a duration the way the buckets are named: 2.5ms,
// 250ms, 1s, 2m, 1h. Runtimes are stored in whole milliseconds: less is
// "< 1ms".
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "< 1ms"
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return humanDuration(d)
}
