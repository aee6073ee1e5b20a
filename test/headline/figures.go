package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// headlineFigures are the metrics the documents quote, in the order of
// the table, with their unit: each is figure "headline."+key of the run.
var headlineFigures = []struct{ key, label, unit string }{
	{"mariadb.php1.jobs_per_s", "MariaDB, php artisan queue:work (one process), jobs/s", "jobs/s"},
	{"mariadb.lw.c1.jobs_per_s", "MariaDB, laraworker c1, jobs/s", "jobs/s"},
	{"mariadb.lw.c16.jobs_per_s", "MariaDB, laraworker c16, jobs/s", "jobs/s"},
	{"mariadb.lw.c128.jobs_per_s", "MariaDB, laraworker c128, jobs/s", "jobs/s"},
	{"mariadb.c128.over_php1", "MariaDB, laraworker c128 / PHP, jobs/s", "x, per round"},
	{"mariadb.php1.cpu_over_c128", "MariaDB, PHP's CPU per job / laraworker c128's", "x, per round"},
	{"pgsql.c1.over_river", "PostgreSQL, laraworker / River, c1", "x jobs/s, per round"},
	{"pgsql.c16.over_river", "PostgreSQL, laraworker / River, c16", "x jobs/s, per round"},
	{"pgsql.c128.over_river", "PostgreSQL, laraworker / River, c128", "x jobs/s, per round"},
	{"redis.c1.over_asynq", "Redis, laraworker / asynq, c1", "x jobs/s, per round"},
	{"redis.c16.over_asynq", "Redis, laraworker / asynq, c16", "x jobs/s, per round"},
	{"redis.c128.over_asynq", "Redis, laraworker / asynq, c128", "x jobs/s, per round"},
	{"redis.php1.jobs_per_s", "Redis, php artisan queue:work redis (one process), jobs/s", "jobs/s"},
	{"redis.c128.over_php1", "Redis, laraworker c128 / PHP, jobs/s", "x, per round"},
	{"redis.php1.cpu_over_c128", "Redis, PHP's CPU per job / laraworker c128's", "x, per round"},
	{"mariadb.php1.sleep0.p50_ms", "Pick-up latency, MariaDB, PHP at --sleep=0, p50 ms", "ms from insert to reserve, 100 jobs/s"},
	{"mariadb.php1.sleep0.p99_ms", "Pick-up latency, MariaDB, PHP at --sleep=0, p99 ms", "ms from insert to reserve, 100 jobs/s"},
	{"mariadb.lw.c128.sleep0.p50_ms", "Pick-up latency, MariaDB, laraworker c128 at --sleep 0, p50 ms", "ms from insert to reserve, 100 jobs/s"},
	{"mariadb.lw.c128.sleep0.p99_ms", "Pick-up latency, MariaDB, laraworker c128 at --sleep 0, p99 ms", "ms from insert to reserve, 100 jobs/s"},
	{"idle.lw.cpu_ms_per_s", "Idle CPU, laraworker work at its defaults, from 70 s idle, ms per s", "CPU ms per second, empty queue, defaults, once the poll backed off to --sleep"},
	{"idle.lw_first_minute.cpu_ms_per_s", "Idle CPU, laraworker work in its first minute idle, ms per s", "CPU ms per second, empty queue, defaults, 3-33 s after the start"},
	{"idle.php1.cpu_ms_per_s", "Idle CPU, php artisan queue:work at its defaults, ms per s", "CPU ms per second, empty queue, defaults"},
	{"mariadb.lw.idle_rss_mb", "Memory, laraworker idle at c128, MiB RSS", "MiB RSS"},
	{"mariadb.lw.c128.peak_rss_mb", "Memory, laraworker c128 drain peak, MiB RSS", "MiB peak RSS"},
	{"mariadb.php1.peak_rss_mb", "Memory, PHP drain peak, MiB RSS", "MiB peak RSS"},
}

// runStamp is the run as docs/figures.json holds it.
type runStamp struct {
	ID      string `json:"id"`
	Date    string `json:"date"`
	Commit  string `json:"commit"`
	Load    string `json:"load"`
	Command string `json:"command"`
	Where   string `json:"where"`
	Note    string `json:"note,omitempty"`
}

func (r *record) stamp() runStamp {
	lo, hi := -1.0, 0.0
	rejected := 0
	for _, rd := range r.Rounds {
		if !rd.Accepted {
			rejected++
			continue
		}
		for _, b := range rd.Blocks {
			for _, l := range []float64{b.LoadBefore, b.LoadAfter} {
				if lo < 0 || l < lo {
					lo = l
				}
				hi = max(hi, l)
			}
		}
	}
	return runStamp{ID: r.ID, Date: r.Started.Format("2006-01-02 15:04") + "-" + r.Finished.Format("15:04") + " UTC",
		Commit: r.Commit, Load: fmt.Sprintf("%.2f-%.2f", lo, hi), Command: "go run ./test/headline (" + r.Command + ")",
		Where: "docs/PERFORMANCE.md#headline-figures",
		Note: fmt.Sprintf("%d rounds accepted, %d rejected (load above %.2f before a block or %.2f after one); every round in docs/headline.json",
			len(r.Rounds)-rejected, rejected, r.MaxLoad, r.MaxLoad+r.OwnLoad)}
}

func (s runStamp) text() string { return s.Date + ", commit " + s.Commit + ", load " + s.Load }

// writeFigures replaces the headline run and figures of figures.json
// with this run's, leaving every other entry byte for byte as it was.
func writeFigures(path string, rec *record) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var src struct {
		Runs    []json.RawMessage `json:"runs"`
		Figures []json.RawMessage `json:"figures"`
	}
	if err := json.Unmarshal(old, &src); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	keep := func(raws []json.RawMessage, field string) []string {
		var out []string
		for _, raw := range raws {
			var v map[string]any
			_ = json.Unmarshal(raw, &v)
			if id, _ := v[field].(string); !strings.HasPrefix(id, "headline.") {
				out = append(out, string(raw))
			}
		}
		return out
	}
	runs, figs := keep(src.Runs, "id"), keep(src.Figures, "name")
	st := rec.stamp()
	b, err := json.MarshalIndent(st, "    ", "  ")
	if err != nil {
		return err
	}
	runs = append(runs, string(b))
	for _, f := range headlineFigures {
		s, ok := rec.Summary[f.key]
		if !ok {
			return fmt.Errorf("no summary of %s: every block must run for the docs", f.key)
		}
		figs = append(figs, fmt.Sprintf(`{"name": %s, "value": %s, "unit": %s, "run": %s}`,
			quote("headline."+f.key), quote(s.Value), quote(f.unit+"; median over the accepted rounds (min-max)"), quote(st.ID)))
	}
	out := "{\n  \"runs\": [\n    " + strings.Join(runs, ",\n    ") + "\n  ],\n  \"figures\": [\n    " + strings.Join(figs, ",\n    ") + "\n  ]\n}\n"
	return os.WriteFile(path, []byte(out), 0o644)
}

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSpace(b.String())
}

const (
	tableBegin = "<!-- headline:begin -->"
	tableEnd   = "<!-- headline:end -->"
)

// writeTable puts the run's table between the headline markers of
// PERFORMANCE.md.
func writeTable(path string, rec *record) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc := string(b)
	i, j := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %s ... %s to write the table between", path, tableBegin, tableEnd)
	}
	st := rec.stamp()
	var t strings.Builder
	fmt.Fprintf(&t, "%s\nThe latest run (written by `go run ./test/headline`: <!-- run:%s -->%s<!-- /run -->; %s):\n\n",
		tableBegin, st.ID, st.text(), st.Note)
	t.WriteString("| figure | median (min-max over the accepted rounds) |\n|---|---|\n")
	for _, f := range headlineFigures {
		fmt.Fprintf(&t, "| %s | <!-- fig:headline.%s -->%s<!-- /fig --> |\n", f.label, f.key, rec.Summary[f.key].Value)
	}
	m := rec.Machine
	fmt.Fprintf(&t, "\nMachine: %s, %d cores, %s; %s; %s; MariaDB %s; %s; %s (%s).\n%s",
		m.CPU, m.Cores, m.Kernel, m.Go, m.PHP, m.MariaDB, m.PostgreSQL, m.Redis, m.RedisSettings, tableEnd)
	return os.WriteFile(path, []byte(doc[:i]+t.String()+doc[j+len(tableEnd):]), 0o644)
}

// printTable shows every summarized metric on stdout.
func printTable(w io.Writer, rec *record) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "metric\tmedian (min-max)\trounds\n")
	keys := make([]string, 0, len(rec.Summary))
	for k := range rec.Summary {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", k, rec.Summary[k].Value, rec.Summary[k].Rounds)
	}
	_ = tw.Flush()
}
