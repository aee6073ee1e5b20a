package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// block is one benchmark program run for one round.
type block struct {
	name string
	dir  string
	args func(round int) []string
	// metrics reads the program's JSON report into named values.
	metrics func(report []byte) (map[string]float64, error)
}

type blockRecord struct {
	Name       string    `json:"name"`
	Command    string    `json:"command"`
	Started    time.Time `json:"started"`
	WallSec    float64   `json:"wall_sec"`
	LoadBefore float64   `json:"load1_before"`
	LoadAfter  float64   `json:"load1_after"`
	// StealPct is the share of the machine's CPU time the hypervisor gave
	// to other guests during the block (/proc/stat steal): a load average
	// does not show it, and it slows every contender.
	StealPct float64 `json:"steal_pct"`
	// Report is the program's own JSON report, whole.
	Report json.RawMessage `json:"report"`
}

type blockResult struct {
	blockRecord
	metrics map[string]float64
}

var concurrencies = []int{1, 16, 128}

func blocksFor(o options, p programs) []block {
	app, _ := filepath.Abs(filepath.Join(o.repo, o.app))
	var out []block
	if !o.skip["mariadb"] {
		out = append(out, block{name: "mariadb", dir: o.repo, metrics: mariadbMetrics, args: func(round int) []string {
			return []string{p.laraworker, "bench", "--laravel-app", app, "--php", o.php, "--db", "mysql", "--db-host", "127.0.0.1", "--db-port", "3306",
				"--db-database", o.mysqlDB, "--db-username", "root", "--jobs", strconv.Itoa(o.jobs), "--php-jobs", strconv.Itoa(o.phpJobs),
				"--rounds", "1", "--round-offset", strconv.Itoa(round - 1), "--latency-jobs", strconv.Itoa(o.latencyJobs), "--only", "php-1,lw-c1,lw-c16,lw-c128",
				"--idle-time", o.idleTime.String(), "--json"}
		}})
	}
	if !o.skip["river"] {
		out = append(out, block{name: "river", dir: filepath.Join(o.repo, "test/riverbench"), metrics: riverMetrics, args: func(round int) []string {
			return []string{p.riverbench, "-dsn", "postgres://postgres@127.0.0.1:5432/" + o.pgDB, "-jobs", strconv.Itoa(o.jobs),
				"-rounds", "1", "-round-offset", strconv.Itoa(round - 1), "-json"}
		}})
	}
	if !o.skip["asynq"] {
		out = append(out, block{name: "asynq", dir: filepath.Join(o.repo, "test/asynqbench"), metrics: asynqMetrics, args: func(round int) []string {
			return []string{p.asynqbench, "-laravel-app", app, "-php", o.php, "-jobs", strconv.Itoa(o.jobs), "-php-jobs", strconv.Itoa(o.redisPHP),
				"-rounds", "1", "-round-offset", strconv.Itoa(round - 1), "-only", "laraworker,asynq,php", "-json"}
		}})
	}
	return out
}

func runBlock(ctx context.Context, b block, round int) (blockResult, error) {
	args := b.args(round)
	r := blockResult{blockRecord: blockRecord{Name: b.name, Command: strings.Join(args, " "), Started: time.Now().UTC(), LoadBefore: load1()}}
	fmt.Fprintf(os.Stderr, "headline: round %d %s (load %.2f)\n", round, b.name, r.LoadBefore)
	steal0, total0 := cpuTimes()
	out, err := command(ctx, b.dir, args[0], args[1:]...)
	r.WallSec, r.LoadAfter = time.Since(r.Started).Seconds(), load1()
	if steal1, total1 := cpuTimes(); total1 > total0 {
		r.StealPct = 100 * float64(steal1-steal0) / float64(total1-total0)
	}
	if err != nil {
		return r, err
	}
	if r.Report, err = lastJSON(out); err != nil {
		return r, err
	}
	r.metrics, err = b.metrics(r.Report)
	return r, err
}

// command runs name in dir, its stderr passed through (the programs'
// progress lines), and returns its stdout.
func command(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", filepath.Base(name), strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}

// lastJSON is the JSON report the programs print after their tables: the
// last line that is a lone "{" starts it (the report is indented), or,
// for a program that prints its report on one line (`laraworker bench
// pickup --json`), the last line when it is a JSON object by itself.
func lastJSON(out []byte) (json.RawMessage, error) {
	if last := lastLine(out); bytes.HasPrefix(last, []byte("{")) && json.Valid(last) {
		return last, nil
	}
	i := bytes.LastIndex(out, []byte("\n{\n"))
	if i < 0 {
		if !bytes.HasPrefix(out, []byte("{\n")) {
			return nil, fmt.Errorf("no JSON report in the output")
		}
		i = -1
	}
	raw := bytes.TrimSpace(out[i+1:])
	if !json.Valid(raw) {
		return nil, fmt.Errorf("the JSON report does not parse")
	}
	return raw, nil
}

// lastLine is out's last non-empty line, trimmed.
func lastLine(out []byte) []byte {
	out = bytes.TrimSpace(out)
	return bytes.TrimSpace(out[bytes.LastIndexByte(out, '\n')+1:])
}

// load1 is the 1-minute load average.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// cpuTimes is the machine's steal time and its total CPU time so far, in
// ticks (the first line of /proc/stat); zeros when unreadable.
func cpuTimes() (steal, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i < 8 { // user nice system idle iowait irq softirq steal; guest time is in user already
			total += n
		}
		if i == 7 {
			steal = n
		}
	}
	return steal, total
}

// mariadbMetrics reads `laraworker bench --json`.
func mariadbMetrics(raw []byte) (map[string]float64, error) {
	var rep struct {
		Results map[string]struct {
			Drains []struct {
				JobsPerSec float64 `json:"jobs_per_sec"`
				CPUPer1k   float64 `json:"cpu_ms_per_1k"`
				ServerCPU  float64 `json:"server_cpu_ms_per_1k"`
				PeakRSSMB  float64 `json:"peak_rss_mb"`
			} `json:"drains"`
			Latency []struct {
				P50ms  float64 `json:"p50_ms"`
				P99ms  float64 `json:"p99_ms"`
				Missed int     `json:"missed"`
			} `json:"latency"`
		} `json:"results"`
		IdleRSSMB float64            `json:"idle_rss_mb_concurrency_128"`
		IdleCPU   map[string]float64 `json:"idle_cpu_ms_per_s"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, err
	}
	m := map[string]float64{"mariadb.lw.idle_rss_mb": rep.IdleRSSMB}
	for name, key := range map[string]string{"php-1": "mariadb.php1", "lw-c1": "mariadb.lw.c1", "lw-c16": "mariadb.lw.c16", "lw-c128": "mariadb.lw.c128"} {
		r, ok := rep.Results[name]
		if !ok || len(r.Drains) != 1 {
			return nil, fmt.Errorf("laraworker bench: no single drain of %s", name)
		}
		d := r.Drains[0]
		m[key+".jobs_per_s"], m[key+".cpu_ms_per_1k"], m[key+".server_cpu_ms_per_1k"], m[key+".peak_rss_mb"] = d.JobsPerSec, d.CPUPer1k, d.ServerCPU, d.PeakRSSMB
		// The bench's latency phase: jobs pushed one by one to a worker at
		// --sleep 0 (php-1, lw-c1 and lw-c128 have one).
		if len(r.Latency) == 1 {
			if r.Latency[0].Missed > 0 {
				return nil, fmt.Errorf("laraworker bench: %s missed %d pick-ups in the latency phase", name, r.Latency[0].Missed)
			}
			m[key+".sleep0.p50_ms"], m[key+".sleep0.p99_ms"] = r.Latency[0].P50ms, r.Latency[0].P99ms
		}
	}
	for name, key := range map[string]string{"lw": "idle.lw.cpu_ms_per_s", "php-1": "idle.php1.cpu_ms_per_s"} {
		v, ok := rep.IdleCPU[name]
		if !ok {
			return nil, fmt.Errorf("laraworker bench: no idle CPU of %s", name)
		}
		m[key] = v
	}
	if v, ok := rep.IdleCPU["lw-first-minute"]; ok { // before its poll backs off to --sleep
		m["idle.lw_first_minute.cpu_ms_per_s"] = v
	}
	return m, nil
}

// riverMetrics reads test/riverbench -json.
func riverMetrics(raw []byte) (map[string]float64, error) {
	var rep struct {
		Results []struct {
			Concurrency int                      `json:"concurrency"`
			Laraworker  []libMeasure             `json:"laraworker"`
			River       []libMeasure             `json:"river"`
			Ratio       struct{ Median float64 } `json:"ratio_jobs_per_sec"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, err
	}
	m := map[string]float64{}
	for _, l := range rep.Results {
		if len(l.Laraworker) != 1 || len(l.River) != 1 {
			return nil, fmt.Errorf("riverbench c%d: want one drain each", l.Concurrency)
		}
		k := fmt.Sprintf("pgsql.c%d.", l.Concurrency)
		m[k+"lw.jobs_per_s"], m[k+"river.jobs_per_s"] = l.Laraworker[0].JobsPerSec, l.River[0].JobsPerSec
		m[k+"lw.cpu_ms_per_1k"], m[k+"river.cpu_ms_per_1k"] = l.Laraworker[0].CPUPer1k, l.River[0].CPUPer1k
	}
	return m, checkLevels("riverbench", m, "pgsql")
}

type libMeasure struct {
	JobsPerSec float64 `json:"jobs_per_sec"`
	CPUPer1k   float64 `json:"cpu_ms_per_1k"`
	RedisCPU   float64 `json:"redis_cpu_ms_per_1k"`
}

// asynqMetrics reads test/asynqbench -json.
func asynqMetrics(raw []byte) (map[string]float64, error) {
	var rep struct {
		Results []struct {
			Concurrency int          `json:"concurrency"`
			Laraworker  []libMeasure `json:"laraworker"`
			Asynq       []libMeasure `json:"asynq"`
		} `json:"results"`
		Procs *struct {
			PHP []libMeasure `json:"php"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, err
	}
	m := map[string]float64{}
	for _, l := range rep.Results {
		if len(l.Laraworker) != 1 || len(l.Asynq) != 1 {
			return nil, fmt.Errorf("asynqbench c%d: want one drain each", l.Concurrency)
		}
		k := fmt.Sprintf("redis.c%d.", l.Concurrency)
		m[k+"lw.jobs_per_s"], m[k+"asynq.jobs_per_s"] = l.Laraworker[0].JobsPerSec, l.Asynq[0].JobsPerSec
		m[k+"lw.cpu_ms_per_1k"], m[k+"asynq.cpu_ms_per_1k"] = l.Laraworker[0].CPUPer1k, l.Asynq[0].CPUPer1k
		m[k+"lw.redis_cpu_ms_per_1k"], m[k+"asynq.redis_cpu_ms_per_1k"] = l.Laraworker[0].RedisCPU, l.Asynq[0].RedisCPU
	}
	if rep.Procs == nil || len(rep.Procs.PHP) != 1 {
		return nil, fmt.Errorf("asynqbench: no single PHP drain")
	}
	php := rep.Procs.PHP[0]
	m["redis.php1.jobs_per_s"], m["redis.php1.cpu_ms_per_1k"], m["redis.php1.redis_cpu_ms_per_1k"] = php.JobsPerSec, php.CPUPer1k, php.RedisCPU
	return m, checkLevels("asynqbench", m, "redis")
}

func checkLevels(prog string, m map[string]float64, prefix string) error {
	for _, c := range concurrencies {
		if _, ok := m[fmt.Sprintf("%s.c%d.lw.jobs_per_s", prefix, c)]; !ok {
			return fmt.Errorf("%s: no c%d", prog, c)
		}
	}
	return nil
}

// derive adds the ratios of one round: ratios are taken within a round
// (both sides under the same machine), then summarized over the rounds.
func derive(m map[string]float64) {
	ratio := func(name, a, b string) {
		x, okA := m[a]
		y, okB := m[b]
		if okA && okB && y > 0 {
			m[name] = x / y
		}
	}
	ratio("mariadb.c128.over_php1", "mariadb.lw.c128.jobs_per_s", "mariadb.php1.jobs_per_s")
	ratio("mariadb.php1.cpu_over_c128", "mariadb.php1.cpu_ms_per_1k", "mariadb.lw.c128.cpu_ms_per_1k")
	ratio("idle.lw.over_php1", "idle.lw.cpu_ms_per_s", "idle.php1.cpu_ms_per_s")
	for _, c := range concurrencies {
		ratio(fmt.Sprintf("pgsql.c%d.over_river", c), fmt.Sprintf("pgsql.c%d.lw.jobs_per_s", c), fmt.Sprintf("pgsql.c%d.river.jobs_per_s", c))
		ratio(fmt.Sprintf("redis.c%d.over_asynq", c), fmt.Sprintf("redis.c%d.lw.jobs_per_s", c), fmt.Sprintf("redis.c%d.asynq.jobs_per_s", c))
	}
	ratio("redis.c128.over_php1", "redis.c128.lw.jobs_per_s", "redis.php1.jobs_per_s")
	ratio("redis.php1.cpu_over_c128", "redis.php1.cpu_ms_per_1k", "redis.c128.lw.cpu_ms_per_1k")
}

// latencyHook runs `laraworker bench pickup` (dispatch-to-start latency
// and idle CPU of one worker at the default settings, 50 jobs/s) on
// MariaDB, PostgreSQL and Redis, once after the rounds, and keeps each
// JSON report whole (or the error) under the queue's name.
func latencyHook(ctx context.Context, p programs, o options) json.RawMessage {
	queues := []struct {
		name string
		args []string
	}{
		{"mariadb", []string{"--db", "mysql", "--db-host", "127.0.0.1", "--db-port", "3306", "--db-database", o.mysqlDB, "--db-username", "root"}},
		{"pgsql", []string{"--db", "pgsql", "--db-host", "127.0.0.1", "--db-port", "5432", "--db-database", o.pgDB, "--db-username", "postgres"}},
		{"redis", []string{"--redis", "127.0.0.1:6379"}},
	}
	reports := map[string]json.RawMessage{}
	for _, q := range queues {
		args := append([]string{"bench", "pickup", "--json", "--php", "off"}, q.args...)
		if o.quick {
			args = append(args, "--duration", "5s", "--idle", "3s", "--warm-up", "2s")
		}
		out, err := command(ctx, o.repo, p.laraworker, args...)
		if err == nil {
			var raw json.RawMessage
			if raw, err = lastJSON(out); err == nil {
				reports[q.name] = raw
				continue
			}
		}
		msg, _ := json.Marshal(map[string]string{"error": err.Error()})
		reports[q.name] = msg
	}
	raw, _ := json.Marshal(reports)
	return raw
}
