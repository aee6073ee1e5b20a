package dashboard

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/laraworker/laraworker/internal/redact"
	"github.com/laraworker/laraworker/internal/visible"
)

// seriesData feeds the overview's charts (uPlot): one x axis of bucket
// starts and, per class, jobs done (from the workers' history rows) and
// failed (from failed_jobs, all workers).
type seriesData struct {
	Step   int64   `json:"step"`
	T      []int64 `json:"t"`
	Done   []line  `json:"done"`
	Failed []line  `json:"failed"`
}

type line struct {
	Label string  `json:"label"`
	Data  []int64 `json:"data"`
}

// maxLines bounds the classes a chart draws; the rest add up as "other".
const maxLines = 6

func (s *Server) series(w http.ResponseWriter, r *http.Request) {
	span, step := time.Hour, int64(60)
	if r.URL.Query().Get("span") == "day" {
		span, step = 24*time.Hour, 600
	}
	now := s.now().Unix()
	end := now/step*step + step
	start := end - int64(span.Seconds())
	n := int((end - start) / step)
	d := seriesData{Step: step, T: make([]int64, n)}
	for i := range d.T {
		d.T[i] = start + int64(i)*step
	}
	ctx, cancel := requestCtx(r)
	defer cancel()
	done := map[string][]int64{}
	rows, err := s.opt.Fleet.History(ctx, start)
	if err != nil {
		http.Error(w, s.clean(err.Error()), http.StatusInternalServerError)
		return
	}
	for _, h := range rows {
		add(done, h.Class, n, int((h.Minute-start)/step), h.Done)
	}
	failed := map[string][]int64{}
	for _, f := range s.snap.FailuresSince(start) {
		add(failed, f.Class, n, int((f.Minute-start)/step), f.Count)
	}
	d.Done, d.Failed = lines(done, n), lines(failed, n)
	w.Header().Set("Content-Type", "application/json")
	// The labels are class names, shown by the page's script as text.
	b, err := json.Marshal(redact.Map(d, func(v string) string { return visible.String(s.clean(v)) }))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(b)
}

func add(m map[string][]int64, class string, n, i int, v int64) {
	if i < 0 || i >= n {
		return
	}
	if m[class] == nil {
		m[class] = make([]int64, n)
	}
	m[class][i] += v
}

// lines orders classes by total, keeping maxLines and summing the rest.
func lines(m map[string][]int64, n int) []line {
	var out []line
	for class, data := range m {
		out = append(out, line{class, data})
	}
	total := func(l line) (t int64) {
		for _, v := range l.Data {
			t += v
		}
		return t
	}
	slices.SortFunc(out, func(a, b line) int { return cmp.Or(cmp.Compare(total(b), total(a)), cmp.Compare(a.Label, b.Label)) })
	if len(out) > maxLines {
		other := line{"other", make([]int64, n)}
		for _, l := range out[maxLines-1:] {
			for i, v := range l.Data {
				other.Data[i] += v
			}
		}
		out = append(out[:maxLines-1], other)
	}
	if out == nil {
		out = []line{}
	}
	return out
}
