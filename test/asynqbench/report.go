package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

type report struct {
	RedisVersion      string    `json:"redis_version"`
	Started           time.Time `json:"started"`
	Finished          time.Time `json:"finished"`
	Jobs              int       `json:"jobs"`
	PHPJobs           int       `json:"php_jobs"`
	Rounds            int       `json:"rounds"`
	AsynqPayloadBytes int       `json:"asynq_payload_bytes"`
	Levels            []*level  `json:"results"`
	// Procs are the worker processes (PHP and the laraworker command),
	// when a Laravel app was given.
	Procs   *procLevel      `json:"processes,omitempty"`
	Latency []latencyResult `json:"latency,omitempty"`
	Load    spread          `json:"load1"`
}

// level is one concurrency over the rounds.
type level struct {
	Concurrency int       `json:"concurrency"`
	Laraworker  []measure `json:"laraworker"`
	Asynq       []measure `json:"asynq"`
	// Ratio is laraworker's jobs/s over asynq's, per round; CPURatio and
	// RedisCPURatio laraworker's CPU per job over asynq's (below 1:
	// laraworker spends less).
	Ratio         spread  `json:"ratio_jobs_per_sec"`
	CPURatio      spread  `json:"ratio_cpu_per_job"`
	RedisCPURatio spread  `json:"ratio_redis_cpu_per_job"`
	LW            summary `json:"laraworker_summary"`
	AS            summary `json:"asynq_summary"`
}

// procLevel is PHP's worker and the laraworker command over the rounds.
type procLevel struct {
	CLIConcurrency int       `json:"cli_concurrency"`
	PHP            []measure `json:"php"`
	CLI            []measure `json:"cli"`
	// CLIOverPHP is the command's jobs/s over PHP's, LibOverPHP the
	// library's at the same concurrency (same round) over PHP's, and
	// PHPCPUOverCLI PHP's CPU per job over the command's, per round.
	CLIOverPHP    spread  `json:"ratio_cli_over_php"`
	LibOverPHP    spread  `json:"ratio_library_over_php"`
	PHPCPUOverCLI spread  `json:"ratio_php_cpu_over_cli"`
	PHPSum        summary `json:"php_summary"`
	CLISum        summary `json:"cli_summary"`
	// CLIBase is the command built from another commit
	// (-laraworker-base), in the same rounds: before and after a change.
	CLIBase           []measure `json:"cli_base,omitempty"`
	CLIBaseSum        *summary  `json:"cli_base_summary,omitempty"`
	PHPCPUOverCLIBase *spread   `json:"ratio_php_cpu_over_cli_base,omitempty"`
}

type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

type summary struct {
	JobsPerSec    spread  `json:"jobs_per_sec"`
	CPUPer1k      float64 `json:"cpu_ms_per_1k"`
	RedisCPUPer1k float64 `json:"redis_cpu_ms_per_1k"`
	StartSec      float64 `json:"startup_sec,omitempty"`
	RedisIrPerJob float64 `json:"redis_ir_per_job,omitempty"`
	Load1         spread  `json:"load1"`
}

func (r *report) add(c int, name string, m measure) {
	i := slices.IndexFunc(r.Levels, func(l *level) bool { return l.Concurrency == c })
	if i < 0 {
		r.Levels = append(r.Levels, &level{Concurrency: c})
		i = len(r.Levels) - 1
	}
	l := r.Levels[i]
	if name == "asynq" {
		l.Asynq = append(l.Asynq, m)
	} else {
		l.Laraworker = append(l.Laraworker, m)
	}
}

func (r *report) finish() {
	var loads []float64
	for _, l := range r.Levels {
		l.Ratio = ratios(l.Laraworker, l.Asynq, func(m measure) float64 { return m.JobsPerSec })
		l.CPURatio = ratios(l.Laraworker, l.Asynq, func(m measure) float64 { return m.CPUPer1k })
		l.RedisCPURatio = ratios(l.Laraworker, l.Asynq, func(m measure) float64 { return m.RedisCPUPer1k })
		l.LW, l.AS = summarize(l.Laraworker), summarize(l.Asynq)
		loads = append(loads, pick(l.Laraworker, load)...)
		loads = append(loads, pick(l.Asynq, load)...)
	}
	if p := r.Procs; p != nil {
		p.CLIOverPHP = ratios(p.CLI, p.PHP, func(m measure) float64 { return m.JobsPerSec })
		p.PHPCPUOverCLI = ratios(p.PHP, p.CLI, func(m measure) float64 { return m.CPUPer1k })
		if i := slices.IndexFunc(r.Levels, func(l *level) bool { return l.Concurrency == p.CLIConcurrency }); i >= 0 {
			p.LibOverPHP = ratios(r.Levels[i].Laraworker, p.PHP, func(m measure) float64 { return m.JobsPerSec })
		}
		p.PHPSum, p.CLISum = summarize(p.PHP), summarize(p.CLI)
		if len(p.CLIBase) > 0 {
			sum, r := summarize(p.CLIBase), ratios(p.PHP, p.CLIBase, func(m measure) float64 { return m.CPUPer1k })
			p.CLIBaseSum, p.PHPCPUOverCLIBase = &sum, &r
			loads = append(loads, pick(p.CLIBase, load)...)
		}
		loads = append(loads, pick(p.PHP, load)...)
		loads = append(loads, pick(p.CLI, load)...)
	}
	for _, l := range r.Latency {
		loads = append(loads, l.Load1)
	}
	r.Load = spreadOf(loads)
}

func load(m measure) float64 { return m.Load1 }

// ratios is a/b round by round (the same round's drains).
func ratios(a, b []measure, f func(measure) float64) spread {
	var v []float64
	for i := range min(len(a), len(b)) {
		if f(b[i]) > 0 {
			v = append(v, f(a[i])/f(b[i]))
		}
	}
	return spreadOf(v)
}

func pick(ms []measure, f func(measure) float64) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = f(m)
	}
	return out
}

func summarize(ms []measure) summary {
	return summary{
		JobsPerSec:    spreadOf(pick(ms, func(m measure) float64 { return m.JobsPerSec })),
		CPUPer1k:      spreadOf(pick(ms, func(m measure) float64 { return m.CPUPer1k })).Median,
		RedisCPUPer1k: spreadOf(pick(ms, func(m measure) float64 { return m.RedisCPUPer1k })).Median,
		StartSec:      spreadOf(pick(ms, func(m measure) float64 { return m.StartSec })).Median,
		RedisIrPerJob: spreadOf(pick(ms, func(m measure) float64 { return m.RedisIrPerJob })).Median,
		Load1:         spreadOf(pick(ms, load)),
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
	fmt.Fprintf(w, "Redis %s (private redis-server), %d jobs per drain (PHP %d), %d rounds, asynq payload %d bytes, %s to %s, load %.2f-%.2f\n\n",
		r.RedisVersion, r.Jobs, r.PHPJobs, r.Rounds, r.AsynqPayloadBytes, r.Started.Format(time.RFC3339), r.Finished.Format(time.RFC3339), r.Load.Min, r.Load.Max)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "c\tlaraworker jobs/s\tasynq jobs/s\tlaraworker/asynq\tCPU ms/1k lw / asynq\tCPU lw/asynq\tredis CPU ms/1k lw / asynq\tload1")
	for _, l := range r.Levels {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.1f / %.1f\t%s\t%.1f / %.1f\t%.2f-%.2f\n", l.Concurrency,
			fmtSpread(l.LW.JobsPerSec, "%.0f"), fmtSpread(l.AS.JobsPerSec, "%.0f"), fmtSpread(l.Ratio, "%.2f"),
			l.LW.CPUPer1k, l.AS.CPUPer1k, fmtSpread(l.CPURatio, "%.2f"), l.LW.RedisCPUPer1k, l.AS.RedisCPUPer1k,
			min(l.LW.Load1.Min, l.AS.Load1.Min), max(l.LW.Load1.Max, l.AS.Load1.Max))
	}
	_ = tw.Flush()
	for _, l := range r.Levels {
		if l.LW.RedisIrPerJob > 0 || l.AS.RedisIrPerJob > 0 {
			fmt.Fprintf(w, "c%d redis-server instructions per job (callgrind): laraworker %.0f, asynq %.0f\n", l.Concurrency, l.LW.RedisIrPerJob, l.AS.RedisIrPerJob)
		}
	}
	if p := r.Procs; p != nil {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "process\tjobs/s\tCPU ms/1k\tredis CPU ms/1k\tstart-up s\tload1")
		rows := []struct {
			name string
			s    summary
		}{{"php artisan queue:work redis", p.PHPSum}, {fmt.Sprintf("laraworker work --concurrency %d", p.CLIConcurrency), p.CLISum}}
		if p.CLIBaseSum != nil {
			rows = append(rows, struct {
				name string
				s    summary
			}{fmt.Sprintf("laraworker work --concurrency %d (-laraworker-base)", p.CLIConcurrency), *p.CLIBaseSum})
		}
		for _, row := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.2f\t%.2f-%.2f\n", row.name, fmtSpread(row.s.JobsPerSec, "%.0f"),
				row.s.CPUPer1k, row.s.RedisCPUPer1k, row.s.StartSec, row.s.Load1.Min, row.s.Load1.Max)
		}
		_ = tw.Flush()
		if p.PHPSum.RedisIrPerJob > 0 {
			fmt.Fprintf(w, "redis-server instructions per job (callgrind): php %.0f, laraworker work %.0f\n", p.PHPSum.RedisIrPerJob, p.CLISum.RedisIrPerJob)
		}
		fmt.Fprintf(w, "laraworker work / php (jobs/s, per round): %s; library c%d / php: %s; php CPU per job / laraworker work's: %s\n",
			fmtSpread(p.CLIOverPHP, "%.1f"), p.CLIConcurrency, fmtSpread(p.LibOverPHP, "%.1f"), fmtSpread(p.PHPCPUOverCLI, "%.1f"))
		if p.PHPCPUOverCLIBase != nil {
			fmt.Fprintf(w, "php CPU per job / -laraworker-base's: %s\n", fmtSpread(*p.PHPCPUOverCLIBase, "%.1f"))
		}
	}
	if len(r.Latency) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "pick-up latency\tjobs\trate/s\tp50 ms\tp99 ms\tmax ms\tCPU ms/1k\tredis CPU ms/1k\tload1")
		for _, l := range r.Latency {
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\t%.2f\n", l.Name, l.Jobs, l.Pushed, l.P50Ms, l.P99Ms, l.MaxMs, l.CPUPer1k, l.RedisCPUPer1k, l.Load1)
		}
		_ = tw.Flush()
	}
}

func fmtSpread(s spread, f string) string {
	return fmt.Sprintf(f+" ("+f+"-"+f+")", s.Median, s.Min, s.Max)
}
