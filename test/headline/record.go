package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// record is docs/headline.json: one run of the block, every round kept
// (rejected ones with why), and the summaries over the accepted rounds.
type record struct {
	ID        string        `json:"id"`
	Command   string        `json:"command"`
	Commit    string        `json:"commit"`
	Started   time.Time     `json:"started"`
	Finished  time.Time     `json:"finished"`
	Quick     bool          `json:"quick"`
	MaxLoad   float64       `json:"max_load"`
	OwnLoad   float64       `json:"own_load"`
	SettleSec float64       `json:"settle_sec"`
	Jobs      int           `json:"jobs"`
	PHPJobs   int           `json:"php_jobs"`
	RedisPHP  int           `json:"redis_php_jobs"`
	IdleSec   float64       `json:"idle_sec"`
	Machine   machineInfo   `json:"machine"`
	Rounds    []roundRecord `json:"rounds"`
	// Summary is, per metric, the median over the accepted rounds with
	// the spread, and the value as the documents print it.
	Summary map[string]summary `json:"summary"`
	// Latency is the pick-up latency bench's report, or why there is none.
	Latency json.RawMessage `json:"latency"`
}

type roundRecord struct {
	Round    int                `json:"round"`
	Accepted bool               `json:"accepted"`
	Rejected []string           `json:"rejected,omitempty"`
	Blocks   []blockRecord      `json:"blocks"`
	Metrics  map[string]float64 `json:"metrics"`
}

type summary struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Rounds int     `json:"rounds"`
	Value  string  `json:"value"`
}

type machineInfo struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	Kernel     string `json:"kernel"`
	Go         string `json:"go"`
	PHP        string `json:"php"`
	MariaDB    string `json:"mariadb"`
	PostgreSQL string `json:"postgresql"`
	Redis      string `json:"redis"`
	// RedisSettings are the private redis-server's persistence settings
	// (test/asynqbench starts it with no RDB saves and no AOF).
	RedisSettings string `json:"redis_settings"`
	Uptime        string `json:"uptime_at_start"`
}

func machine(ctx context.Context, o options) machineInfo {
	first := func(name string, args ...string) string {
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			return "unknown (" + err.Error() + ")"
		}
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return line
	}
	m := machineInfo{Cores: runtime.NumCPU(), Go: first("go", "version"), PHP: first(o.php, "-v"),
		MariaDB:       first("mysql", "-h127.0.0.1", "-uroot", "-N", "-e", "select version()"),
		PostgreSQL:    first("psql", "-h", "127.0.0.1", "-U", "postgres", "-d", o.pgDB, "-Atc", "select version()"),
		Redis:         first("redis-server", "--version"),
		RedisSettings: "private redis-server per run: --save '' --appendonly no (test/asynqbench/server.go)",
		Kernel:        first("uname", "-sr"), Uptime: first("uptime")}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	return m
}

func gitCommit(repo string) (string, error) {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse: %w", err)
	}
	dirty, _ := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output()
	if len(dirty) > 0 {
		fmt.Fprintln(os.Stderr, "headline: the checkout has uncommitted changes: the commit recorded is HEAD's, not the code measured")
	}
	return strings.TrimSpace(string(out)), nil
}

// summarize takes, for every metric the accepted rounds all have, the
// median and the spread.
func (r *record) summarize() {
	r.ID = "headline." + r.Started.Format("2006-01-02")
	values := map[string][]float64{}
	accepted := 0
	for _, rd := range r.Rounds {
		if !rd.Accepted {
			continue
		}
		accepted++
		for k, v := range rd.Metrics {
			values[k] = append(values[k], v)
		}
	}
	r.Summary = map[string]summary{}
	for k, vs := range values {
		if len(vs) == accepted {
			r.Summary[k] = spreadOf(vs)
		}
	}
}

// spreadOf is the median and the range of vs, and how the documents print
// them: "median (min-max)". docs/headline_test.go recomputes it from the
// rounds with the same rules.
func spreadOf(vs []float64) summary {
	s := slices.Clone(vs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	out := summary{Median: med, Min: s[0], Max: s[len(s)-1], Rounds: len(s)}
	out.Value = fmt.Sprintf("%s (%s-%s)", number(out.Median), number(out.Min), number(out.Max))
	return out
}

// number prints a figure with the digits the documents use: thousands
// with commas, then fewer decimals the larger the value.
func number(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return commas(int64(math.Round(v)))
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func commas(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// write saves the record; a full run (no -out) also puts its figures in
// docs/figures.json and its table in docs/PERFORMANCE.md.
func write(o options, rec *record) error {
	dir := o.out
	if dir == "" {
		dir = filepath.Join(o.repo, "docs")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "headline.json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "headline: wrote", path)
	printTable(os.Stdout, rec)
	if o.out != "" {
		return nil
	}
	if err := writeFigures(filepath.Join(dir, "figures.json"), rec); err != nil {
		return err
	}
	return writeTable(filepath.Join(dir, "PERFORMANCE.md"), rec)
}

// readRecord loads a headline.json and summarizes it again from its
// rounds.
func readRecord(path string) (*record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rec.Quick {
		return nil, fmt.Errorf("%s is a -quick run: smoke tests are not figures", path)
	}
	rec.summarize()
	return &rec, nil
}
