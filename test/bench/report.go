package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/console"
)

// report holds every measurement of a run and the summaries drawn
// from them.
type report struct {
	Driver        string                      `json:"driver"`
	ServerVersion string                      `json:"server_version"`
	Lock          string                      `json:"lock"`
	Jobs          int                         `json:"jobs"`
	PHPJobs       int                         `json:"php_jobs"`
	Rounds        int                         `json:"rounds"`
	Started       time.Time                   `json:"started"`
	Order         []string                    `json:"order"`
	Results       map[string]*contenderResult `json:"results"`
	Ratios        []ratio                     `json:"ratios"`
	IdleRSSMB     float64                     `json:"idle_rss_mb_concurrency_128"`
	// IdleCPUMsPerSec (--idle-time) is CPU milliseconds per second of an
	// idle worker at its defaults: "lw" and "php-1".
	IdleCPUMsPerSec map[string]float64  `json:"idle_cpu_ms_per_s,omitempty"`
	Big             *bigResult          `json:"big_table,omitempty"`
	Workloads       []*workloadResult   `json:"workloads,omitempty"`
	Continuous      []continuousMeasure `json:"continuous,omitempty"`
}

type contenderResult struct {
	Drains  []drainMeasure   `json:"drains"`
	Latency []latencyMeasure `json:"latency,omitempty"`
	Summary summary          `json:"summary"`
}

// summary: medians over the rounds, with the spread of the rate.
type summary struct {
	JobsPerSec     float64 `json:"jobs_per_sec"`
	JobsPerSecMin  float64 `json:"jobs_per_sec_min"`
	JobsPerSecMax  float64 `json:"jobs_per_sec_max"`
	CPUPer1k       float64 `json:"cpu_ms_per_1k"`
	ServerCPUPer1k float64 `json:"server_cpu_ms_per_1k"`
	// RawClientCPUPer1k and Statements: see drainMeasure.
	RawClientCPUPer1k float64            `json:"raw_client_cpu_ms_per_1k,omitempty"`
	Statements        map[string]float64 `json:"server_statements_per_1k,omitempty"`
	PeakRSSMB         float64            `json:"peak_rss_mb"`
	P50ms             float64            `json:"latency_p50_ms"`
	P99ms             float64            `json:"latency_p99_ms"`
	LoadMin           float64            `json:"load1_min"`
	LoadMax           float64            `json:"load1_max"`
}

// ratio compares two contenders round by round (same run, same
// round), so slow phases of a shared machine hit both sides.
type ratio struct {
	Name   string  `json:"name"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func (r *report) result(name string) *contenderResult {
	if r.Results == nil {
		r.Results = map[string]*contenderResult{}
	}
	cr, ok := r.Results[name]
	if !ok {
		cr = &contenderResult{}
		r.Results[name] = cr
		r.Order = append(r.Order, name)
	}
	return cr
}

func (r *report) add(name string, m drainMeasure) {
	cr := r.result(name)
	cr.Drains = append(cr.Drains, m)
}

func (r *report) addLatency(name string, m latencyMeasure) {
	cr := r.result(name)
	cr.Latency = append(cr.Latency, m)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func pluck[T any](items []T, f func(T) float64) []float64 {
	out := make([]float64, len(items))
	for i, it := range items {
		out[i] = f(it)
	}
	return out
}

func (r *report) finish() {
	for _, cr := range r.Results {
		rates := pluck(cr.Drains, func(m drainMeasure) float64 { return m.JobsPerSec })
		loads := append(pluck(cr.Drains, func(m drainMeasure) float64 { return m.Load1 }),
			pluck(cr.Latency, func(m latencyMeasure) float64 { return m.Load1 })...)
		s := &cr.Summary
		s.JobsPerSec = median(rates)
		if len(rates) > 0 {
			s.JobsPerSecMin, s.JobsPerSecMax = slices.Min(rates), slices.Max(rates)
			s.LoadMin, s.LoadMax = slices.Min(loads), slices.Max(loads)
		}
		s.CPUPer1k = median(pluck(cr.Drains, func(m drainMeasure) float64 { return m.CPUPer1k }))
		s.ServerCPUPer1k = median(pluck(cr.Drains, func(m drainMeasure) float64 { return m.ServerCPUPer1k }))
		s.PeakRSSMB = median(pluck(cr.Drains, func(m drainMeasure) float64 { return m.PeakRSSMB }))
		s.RawClientCPUPer1k = median(pluck(cr.Drains, func(m drainMeasure) float64 { return m.RawClientCPUPer1k }))
		s.Statements = medianStatements(cr.Drains)
		s.P50ms = median(pluck(cr.Latency, func(m latencyMeasure) float64 { return m.P50ms }))
		s.P99ms = median(pluck(cr.Latency, func(m latencyMeasure) float64 { return m.P99ms }))
	}
	pairs := [][3]string{
		{"lw-c128 / php-1 (jobs/s)", "lw-c128", "php-1"},
		{"lw-c128 / php-2 (jobs/s)", "lw-c128", "php-2"},
		{"lw-exact / php-1 (jobs/s)", "lw-exact", "php-1"},
		{"lw-exact / raw-exact (jobs/s)", "lw-exact", "raw-exact"},
		{"lw-c1 / raw-b1 (jobs/s)", "lw-c1", "raw-b1"},
		{"lw-c16 / raw-b16 (jobs/s)", "lw-c16", "raw-b16"},
		{"lw-c128 / raw-b128 (jobs/s)", "lw-c128", "raw-b128"},
		{"lw-c128 / raw-2x256 (jobs/s)", "lw-c128", "raw-2x256"},
		{"lw-c128 / raw-store128 (jobs/s)", "lw-c128", "raw-store128"},
		{"lw-c128 / raw-store2x128 (jobs/s)", "lw-c128", "raw-store2x128"},
		{"lw-c128 / raw-store256 (jobs/s)", "lw-c128", "raw-store256"},
	}
	for _, p := range pairs {
		r.addRatio(p[0], p[1], p[2], func(m drainMeasure) float64 { return m.JobsPerSec })
	}
	r.addRatio("php-1 / lw-c128 (CPU per job)", "php-1", "lw-c128", func(m drainMeasure) float64 { return m.CPUPer1k })
	r.addRatio("php-1 / lw-exact (CPU per job)", "php-1", "lw-exact", func(m drainMeasure) float64 { return m.CPUPer1k })
}

func (r *report) addRatio(name, a, b string, f func(drainMeasure) float64) {
	ra, rb := r.Results[a], r.Results[b]
	if ra == nil || rb == nil {
		return
	}
	var v []float64
	for i := range min(len(ra.Drains), len(rb.Drains)) {
		if d := f(rb.Drains[i]); d > 0 {
			v = append(v, f(ra.Drains[i])/d)
		}
	}
	if len(v) > 0 {
		r.Ratios = append(r.Ratios, ratio{Name: name, Median: median(v), Min: slices.Min(v), Max: slices.Max(v)})
	}
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "%s %s (lock: %s), %d rounds, %d jobs per drain (PHP %d), started %s\n\n",
		r.Driver, r.ServerVersion, orDash(r.Lock), r.Rounds, r.Jobs, r.PHPJobs, r.Started.Format(time.RFC3339))
	if len(r.Order) > 0 {
		r.printContenders(w)
	}
	printWorkloads(w, r.Workloads)
	printContinuous(w, r.Continuous)
	if r.Big != nil {
		r.Big.print(w)
	}
}

func (r *report) printContenders(w io.Writer) {
	rows := [][]string{}
	for _, name := range r.Order {
		s := r.Results[name].Summary
		lat := "-"
		if len(r.Results[name].Latency) > 0 {
			lat = fmt.Sprintf("%.1f / %.1f", s.P50ms, s.P99ms)
		}
		cpu, rss := "-", "-"
		if s.CPUPer1k > 0 {
			cpu, rss = fmt.Sprintf("%.0f", s.CPUPer1k), fmt.Sprintf("%.1f", s.PeakRSSMB)
		}
		rows = append(rows, []string{name, fmt.Sprintf("%.0f", s.JobsPerSec), fmt.Sprintf("%.0f-%.0f", s.JobsPerSecMin, s.JobsPerSecMax),
			lat, cpu, orDash(ms(s.ServerCPUPer1k)), rss, fmt.Sprintf("%.2f-%.2f", s.LoadMin, s.LoadMax)})
	}
	_ = console.WriteTable(w, []string{"contender", "jobs/s (median)", "spread", "pick-up p50 / p99 ms", "CPU ms / 1k jobs", "server CPU ms / 1k", "peak RSS MB", "load1"}, rows)
	if len(r.Ratios) > 0 {
		fmt.Fprintln(w)
		var rrows [][]string
		for _, ra := range r.Ratios {
			rrows = append(rrows, []string{ra.Name, fmt.Sprintf("%.2f", ra.Median), fmt.Sprintf("%.2f-%.2f", ra.Min, ra.Max)})
		}
		_ = console.WriteTable(w, []string{"ratio (per round)", "median", "spread"}, rrows)
	}
	printStatements(w, r)
	fmt.Fprintf(w, "\nidle RSS, work --concurrency 128 on an empty queue: %.1f MB\n", r.IdleRSSMB)
}

// ms formats a CPU figure; "" when it was not measured.
func ms(v float64) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f", v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// medianStatements is the median of each server counter over the drains
// (nil when none was counted).
func medianStatements(drains []drainMeasure) map[string]float64 {
	var out map[string]float64
	for _, d := range drains {
		for k := range d.Statements {
			if out == nil {
				out = map[string]float64{}
			}
			if _, done := out[k]; !done {
				out[k] = median(pluck(drains, func(m drainMeasure) float64 { return m.Statements[k] }))
			}
		}
	}
	return out
}

// printStatements prints, per contender, the statements the server
// counted and the raw loops' own client CPU, per 1,000 jobs (medians).
func printStatements(w io.Writer, r *report) {
	var lines []string
	for _, name := range r.Order {
		s := r.Results[name].Summary
		if len(s.Statements) == 0 && s.RawClientCPUPer1k <= 0 {
			continue
		}
		keys := slices.Sorted(maps.Keys(s.Statements))
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %.1f", k, s.Statements[k]))
		}
		if s.RawClientCPUPer1k > 0 {
			parts = append(parts, fmt.Sprintf("client CPU %.1f ms", s.RawClientCPUPer1k))
		}
		lines = append(lines, fmt.Sprintf("  %-10s %s", name, strings.Join(parts, ", ")))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nper 1,000 jobs (medians), the server's statement counters and the raw loops' own client CPU:")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
