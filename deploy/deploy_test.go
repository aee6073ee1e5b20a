// Package deploy holds the Grafana dashboard and Prometheus alert rules
// shipped with laraworker; its test checks they name real metrics.
package deploy

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/longwait"
	"github.com/laraworker/laraworker/worker"
	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"
)

// exported lists every metric name laraworker processes export: the
// worker's (worker.NewMetrics), the queue and fleet gauges
// (worker.NewQueueMetrics) and the long-wait monitor's
// (longwait.NewMetrics), histograms with their series suffixes.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	rec := &recorder{}
	worker.NewMetrics(rec)
	worker.NewQueueMetrics(rec, nil)
	longwait.NewMetrics(rec)
	names := map[string]bool{}
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	for _, c := range rec.cs {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			m := fq.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("cannot read the name of %s", d)
			}
			names[m[1]] = true
			if _, ok := c.(prometheus.Histogram); ok {
				addHistogram(names, m[1])
			} else if _, ok := c.(*prometheus.HistogramVec); ok {
				addHistogram(names, m[1])
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("only %d metrics found: %v", len(names), names)
	}
	return names
}

func addHistogram(names map[string]bool, n string) {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		names[n+s] = true
	}
}

// recorder is a Registerer that keeps the collectors.
type recorder struct{ cs []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error   { r.cs = append(r.cs, c); return nil }
func (r *recorder) MustRegister(cs ...prometheus.Collector) { r.cs = append(r.cs, cs...) }
func (r *recorder) Unregister(prometheus.Collector) bool    { return false }

var (
	stringLit  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	matchers   = regexp.MustCompile(`\{[^{}]*\}`)
	ranges     = regexp.MustCompile(`\[[^\[\]]*\]`)
	labelLists = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	ident      = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	keywords   = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true}
)

// metricNames returns the metric names a PromQL expression selects:
// identifiers that are not functions, aggregations, keywords, label
// names or durations.
func metricNames(expr string) []string {
	e := stringLit.ReplaceAllString(expr, `""`)
	e = matchers.ReplaceAllString(e, " ")
	e = ranges.ReplaceAllString(e, " ")
	e = labelLists.ReplaceAllString(e, " ")
	var out []string
	for _, loc := range ident.FindAllStringIndex(e, -1) {
		name := e[loc[0]:loc[1]]
		rest := strings.TrimLeft(e[loc[1]:], " \t\n")
		if keywords[strings.ToLower(name)] || strings.HasPrefix(rest, "(") {
			continue
		}
		if loc[0] > 0 && (e[loc[0]-1] >= '0' && e[loc[0]-1] <= '9' || e[loc[0]-1] == '.') {
			continue // the exponent or unit of a number
		}
		out = append(out, name)
	}
	return out
}

func checkExpr(t *testing.T, where, expr string, names map[string]bool) {
	t.Helper()
	if strings.Count(expr, "(") != strings.Count(expr, ")") || strings.Count(expr, "{") != strings.Count(expr, "}") {
		t.Errorf("%s: unbalanced brackets in %q", where, expr)
	}
	found := metricNames(expr)
	if len(found) == 0 {
		t.Errorf("%s: %q selects no metric", where, expr)
	}
	for _, n := range found {
		if !names[n] {
			t.Errorf("%s: %q names %s, which laraworker does not export", where, expr, n)
		}
	}
}

func TestMetricNamesParser(t *testing.T) {
	got := metricNames(`histogram_quantile(0.95, sum by (le, class) (rate(laraworker_job_duration_seconds_bucket{queue=~"a|b"}[5m]))) > 1e3 or time() - max(x_y) > 120`)
	if strings.Join(got, ",") != "laraworker_job_duration_seconds_bucket,x_y" {
		t.Errorf("metricNames: %v", got)
	}
}

func TestGrafanaDashboard(t *testing.T) {
	names := exported(t)
	raw, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	exprs := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs++
			checkExpr(t, "panel "+p.Title, strings.ReplaceAll(tg.Expr, "$queue", ".*"), names)
		}
	}
	for _, v := range dash.Templating.List {
		if m := regexp.MustCompile(`label_values\((\w+),`).FindStringSubmatch(v.Definition); m != nil && !names[m[1]] {
			t.Errorf("variable query %q names an unknown metric", v.Definition)
		}
	}
	if exprs < 10 {
		t.Errorf("only %d queries in the dashboard", exprs)
	}
}

func TestAlertRules(t *testing.T) {
	names := exported(t)
	raw, err := os.ReadFile("prometheus-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&rules); err != nil {
		t.Fatalf("prometheus-alerts.yml: %v", err)
	}
	seen := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			seen[r.Alert] = true
			checkExpr(t, "alert "+r.Alert, r.Expr, names)
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("alert %s lacks a severity or a summary", r.Alert)
			}
		}
	}
	for _, want := range []string{"LaraworkerQueueWait", "LaraworkerLongWait", "LaraworkerFailureRate", "LaraworkerNoWorkerSeen"} {
		if !seen[want] {
			t.Errorf("no %s alert", want)
		}
	}
}
