package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

type report struct {
	ServerVersion string    `json:"server_version"`
	Jobs          int       `json:"jobs"`
	Rounds        int       `json:"rounds"`
	Started       time.Time `json:"started"`
	Analyzed      bool      `json:"analyzed"`    // -analyze: tables ANALYZEd after each load
	ClaimIndex    bool      `json:"claim_index"` // -claim-index: laraworker's claim index present
	Results       []*level  `json:"results"`
}

// level is one concurrency over the rounds.
type level struct {
	Concurrency int       `json:"concurrency"`
	Laraworker  []measure `json:"laraworker"`
	River       []measure `json:"river"`
	// Ratio is laraworker's jobs/s over River's, per round.
	Ratio    spread  `json:"ratio_jobs_per_sec"`
	CPURatio spread  `json:"ratio_cpu_per_job"`
	LW       summary `json:"laraworker_summary"`
	RV       summary `json:"river_summary"`
}

type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

type summary struct {
	JobsPerSec     spread  `json:"jobs_per_sec"`
	CPUPer1k       float64 `json:"cpu_ms_per_1k"`
	ServerCPUPer1k float64 `json:"server_cpu_ms_per_1k"`
	Load1          spread  `json:"load1"`
}

func (r *report) add(c int, lw, rv measure) {
	i := slices.IndexFunc(r.Results, func(l *level) bool { return l.Concurrency == c })
	if i < 0 {
		r.Results = append(r.Results, &level{Concurrency: c})
		i = len(r.Results) - 1
	}
	l := r.Results[i]
	l.Laraworker, l.River = append(l.Laraworker, lw), append(l.River, rv)
}

func (r *report) finish() {
	for _, l := range r.Results {
		var rates, cpus []float64
		for i := range l.Laraworker {
			if l.River[i].JobsPerSec > 0 {
				rates = append(rates, l.Laraworker[i].JobsPerSec/l.River[i].JobsPerSec)
			}
			if l.River[i].CPUPer1k > 0 {
				cpus = append(cpus, l.Laraworker[i].CPUPer1k/l.River[i].CPUPer1k)
			}
		}
		l.Ratio, l.CPURatio = spreadOf(rates), spreadOf(cpus)
		l.LW, l.RV = summarize(l.Laraworker), summarize(l.River)
	}
}

func summarize(ms []measure) summary {
	pick := func(f func(measure) float64) []float64 {
		out := make([]float64, len(ms))
		for i, m := range ms {
			out[i] = f(m)
		}
		return out
	}
	return summary{
		JobsPerSec:     spreadOf(pick(func(m measure) float64 { return m.JobsPerSec })),
		CPUPer1k:       spreadOf(pick(func(m measure) float64 { return m.CPUPer1k })).Median,
		ServerCPUPer1k: spreadOf(pick(func(m measure) float64 { return m.ServerCPUPer1k })).Median,
		Load1:          spreadOf(pick(func(m measure) float64 { return m.Load1 })),
	}
}

func spreadOf(v []float64) spread {
	if len(v) == 0 {
		return spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{Median: med, Min: s[0], Max: s[len(s)-1]}
}

func (r *report) print(w io.Writer) {
	stats := "as the server keeps them"
	if r.Analyzed {
		stats = "ANALYZE after each load"
	}
	claim := "Laravel's query (index on queue only)"
	if r.ClaimIndex {
		claim = "laraworker's claim index"
	}
	fmt.Fprintf(w, "PostgreSQL %s, %d jobs per drain, %d rounds, planner statistics: %s, laraworker claims with %s, started %s\n\n",
		r.ServerVersion, r.Jobs, r.Rounds, stats, claim, r.Started.Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "c\tlaraworker jobs/s\tRiver jobs/s\tlaraworker/River\tCPU ms/1k lw / River\tserver CPU ms/1k lw / River\tload1")
	for _, l := range r.Results {
		fmt.Fprintf(tw, "%d\t%.0f (%.0f-%.0f)\t%.0f (%.0f-%.0f)\t%.2f (%.2f-%.2f)\t%.0f / %.0f\t%.0f / %.0f\t%.2f-%.2f\n", l.Concurrency,
			l.LW.JobsPerSec.Median, l.LW.JobsPerSec.Min, l.LW.JobsPerSec.Max,
			l.RV.JobsPerSec.Median, l.RV.JobsPerSec.Min, l.RV.JobsPerSec.Max,
			l.Ratio.Median, l.Ratio.Min, l.Ratio.Max, l.LW.CPUPer1k, l.RV.CPUPer1k, l.LW.ServerCPUPer1k, l.RV.ServerCPUPer1k,
			min(l.LW.Load1.Min, l.RV.Load1.Min), max(l.LW.Load1.Max, l.RV.Load1.Max))
	}
	_ = tw.Flush()
}
