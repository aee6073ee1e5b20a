package docs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// headline.json is the record `go run ./test/headline` writes: every round
// of the headline block with its load, which rounds it accepted, and the
// medians with their spread. The headline figures in figures.json
// ("headline.KEY") must be that record's, recomputed here from its
// accepted rounds: the median with the spread over the rounds, never a
// best round, from the latest run only; and once a headline run exists,
// README.md quotes no throughput or ratio from another run.

type headlineRecord struct {
	ID      string  `json:"id"`
	Commit  string  `json:"commit"`
	Quick   bool    `json:"quick"`
	MaxLoad float64 `json:"max_load"`
	Rounds  []struct {
		Round    int                `json:"round"`
		Accepted bool               `json:"accepted"`
		Metrics  map[string]float64 `json:"metrics"`
	} `json:"rounds"`
	Summary map[string]struct {
		Value string `json:"value"`
	} `json:"summary"`
}

const headlinePrefix = "headline."

// headlineFamilies are the figures the headline block replaces: throughput,
// CPU per job and ratios to PHP and the peers. Once a headline run exists,
// README.md quotes none of them from another run (its other figures, the
// build time, memory over a million jobs, crash runs, stay theirs).
var headlineFamilies = []string{"asynq.", "bench.", "issue24.", "redisdrain.", "river."}

// headlineSection is what test/headline rewrites in PERFORMANCE.md.
var headlineSection = regexp.MustCompile(`(?s)<!-- headline:begin -->(.*?)<!-- headline:end -->`)

func loadHeadline(t *testing.T) *headlineRecord {
	t.Helper()
	b, err := os.ReadFile("headline.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var rec headlineRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("docs/headline.json: %v", err)
	}
	return &rec
}

// checkHeadline returns every way the headline figures stray from the
// latest run's record.
func checkHeadline(src figureSource, rec *headlineRecord, files []mdFile) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var runs []string
	for _, r := range src.Runs {
		if strings.HasPrefix(r.ID, headlinePrefix) {
			runs = append(runs, r.ID)
			if rec != nil && r.Commit != rec.Commit {
				bad("run %s: commit %s, docs/headline.json says %s", r.ID, r.Commit, rec.Commit)
			}
		}
	}
	switch {
	case rec == nil && len(runs) > 0:
		bad("figures.json has headline runs %v but there is no docs/headline.json: run go run ./test/headline", runs)
	case rec != nil && (len(runs) != 1 || runs[0] != rec.ID):
		bad("figures.json must hold exactly the latest headline run, %s; it holds %v", rec.ID, runs)
	case rec != nil && rec.Quick:
		bad("docs/headline.json is a -quick run: smoke tests are not figures")
	}
	for _, f := range src.Figures {
		if !strings.HasPrefix(f.Name, headlinePrefix) {
			continue
		}
		if rec == nil || f.Run != rec.ID {
			bad("figure %s: run %s is not the latest headline run", f.Name, f.Run)
			continue
		}
		key := strings.TrimPrefix(f.Name, headlinePrefix)
		want, err := rec.spread(key)
		if err != nil {
			bad("figure %s: %v", f.Name, err)
			continue
		}
		if f.Value != want {
			bad("figure %s is %q; the accepted rounds of docs/headline.json give %q (median (min-max))", f.Name, f.Value, want)
		}
		if s := rec.Summary[key].Value; s != want {
			bad("docs/headline.json: summary of %s is %q, its rounds give %q", key, s, want)
		}
	}
	for _, file := range files {
		switch file.path {
		case "README.md":
			if rec == nil {
				continue // pending the first run on a quiet machine
			}
			qs, _ := quotesIn(file)
			for _, q := range qs {
				if q.kind == "fig" && slices.ContainsFunc(headlineFamilies, func(p string) bool { return strings.HasPrefix(q.name, p) }) {
					bad("%s: README quotes %s; once a headline run exists its throughput and ratios come from that run (headline.*)", q.where, q.name)
				}
			}
		case "docs/PERFORMANCE.md":
			m := headlineSection.FindStringSubmatch(file.text)
			if m == nil {
				bad("docs/PERFORMANCE.md: no <!-- headline:begin --> ... <!-- headline:end --> for test/headline to write its table")
				continue
			}
			qs, _ := quotesIn(mdFile{path: file.path, text: m[1]})
			for _, q := range qs {
				if !strings.HasPrefix(q.name, headlinePrefix) {
					bad("docs/PERFORMANCE.md: the headline table quotes %s %s, not the headline run's", q.kind, q.name)
				}
			}
		}
	}
	return problems
}

// spread is how test/headline prints a metric over the accepted rounds.
func (r *headlineRecord) spread(key string) (string, error) {
	var vs []float64
	for _, rd := range r.Rounds {
		if !rd.Accepted {
			continue
		}
		v, ok := rd.Metrics[key]
		if !ok {
			return "", fmt.Errorf("accepted round %d has no %s", rd.Round, key)
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return "", fmt.Errorf("no accepted round")
	}
	slices.Sort(vs)
	med := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return fmt.Sprintf("%s (%s-%s)", headlineNumber(med), headlineNumber(vs[0]), headlineNumber(vs[len(vs)-1])), nil
}

// headlineNumber is test/headline's number(): thousands with commas,
// fewer decimals the larger the value.
func headlineNumber(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		s := fmt.Sprint(int64(math.Round(a)))
		var b strings.Builder
		if v < 0 {
			b.WriteByte('-')
		}
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func TestHeadlineFiguresAreTheLatestRun(t *testing.T) {
	rec := loadHeadline(t)
	for _, p := range checkHeadline(loadFigures(t), rec, markdownFiles(t)) {
		t.Error(p)
	}
	if rec == nil {
		t.Log("pending: no docs/headline.json yet (go run ./test/headline on a quiet machine); README.md is not yet held to it")
	}
}

// TestHeadlineCheckCatches feeds the check a record and figures that
// disagree in the ways it must catch.
func TestHeadlineCheckCatches(t *testing.T) {
	rec := &headlineRecord{ID: "headline.2026-12-06", Commit: "abc1234"}
	for i, v := range []float64{900, 1500, 1200, 30000} {
		rec.Rounds = append(rec.Rounds, struct {
			Round    int                `json:"round"`
			Accepted bool               `json:"accepted"`
			Metrics  map[string]float64 `json:"metrics"`
		}{Round: i + 1, Accepted: i < 3, Metrics: map[string]float64{"x.jobs_per_s": v}})
	}
	want, err := rec.spread("x.jobs_per_s")
	if err != nil || want != "1,200 (900-1,500)" {
		t.Fatalf("spread = %q, %v; want the median and range of the accepted rounds, 1,200 (900-1,500)", want, err)
	}
	rec.Summary = map[string]struct {
		Value string `json:"value"`
	}{"x.jobs_per_s": {want}}
	run := figureRun{ID: rec.ID, Commit: "abc1234"}
	perf := mdFile{path: "docs/PERFORMANCE.md", text: "<!-- headline:begin --><!-- fig:headline.x.jobs_per_s -->1,200 (900-1,500)<!-- /fig --><!-- headline:end -->"}
	readme := mdFile{path: "README.md", text: "<!-- fig:issue24.old -->3<!-- /fig --> and <!-- fig:build.cold_s -->70<!-- /fig -->"}
	cases := map[string]struct {
		src   figureSource
		rec   *headlineRecord
		files []mdFile
		want  string // a problem containing this; "" for none
	}{
		"agrees": {figureSource{Runs: []figureRun{run}, Figures: []figure{{Name: "headline.x.jobs_per_s", Value: want, Run: rec.ID}}}, rec, []mdFile{perf}, ""},
		"best round": {figureSource{Runs: []figureRun{run}, Figures: []figure{{Name: "headline.x.jobs_per_s", Value: "1,500", Run: rec.ID}}},
			rec, []mdFile{perf}, "give \"1,200 (900-1,500)\""},
		"older run": {figureSource{Runs: []figureRun{run, {ID: "headline.2026-12-01", Commit: "abc1234"}}}, rec, []mdFile{perf}, "exactly the latest headline run"},
		"readme":    {figureSource{Runs: []figureRun{run}}, rec, []mdFile{perf, readme}, "README quotes issue24.old"},
		"no record": {figureSource{Runs: []figureRun{run}}, nil, []mdFile{perf, readme}, "no docs/headline.json"},
		"no slot":   {figureSource{Runs: []figureRun{run}}, rec, []mdFile{{path: "docs/PERFORMANCE.md", text: "nothing"}}, "headline:begin"},
	}
	for name, c := range cases {
		got := checkHeadline(c.src, c.rec, c.files)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: problems %q, want none", name, got)
		case c.want != "" && !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, c.want) }):
			t.Errorf("%s: problems %q, want one with %q", name, got, c.want)
		}
	}
}
