package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// figures.json is the one source of every measured figure the documents
// quote. A run is one measurement (its date, commit, machine load and the
// command that produced it); a figure is one value of a run. A document
// quotes a figure as
//
//	<!-- fig:NAME -->VALUE<!-- /fig -->
//
// and the run behind it as
//
//	<!-- run:ID -->DATE, commit COMMIT, load LOAD<!-- /run -->
//
// (HTML comments: GitHub shows only VALUE and the stamp). The check below
// fails when a quoted value or stamp differs from the source, when two
// documents quote different values under one name, when a document quotes
// a figure without its run's stamp, when a run lacks its date, commit, load
// or command (unless it says why it cannot have them: "untraced"), and when
// the source holds a figure or run no document quotes.

type figureSource struct {
	Runs    []figureRun `json:"runs"`
	Figures []figure    `json:"figures"`
}

type figureRun struct {
	ID      string `json:"id"`
	Date    string `json:"date"`    // YYYY-MM-DD, optionally the UTC time range
	Commit  string `json:"commit"`  // the commit whose code was measured
	Load    string `json:"load"`    // 1-minute load average during the run
	Command string `json:"command"` // what reproduces it
	Where   string `json:"where"`   // the full results: a document and anchor
	// Untraced says what of date, commit and load is not known and why;
	// such a run is listed by the test and waits for a re-measurement.
	Untraced string `json:"untraced,omitempty"`
	Note     string `json:"note,omitempty"`
}

type figure struct {
	Name  string `json:"name"`
	Value string `json:"value"` // exactly as the documents print it
	Unit  string `json:"unit"`
	Run   string `json:"run"`
	Note  string `json:"note,omitempty"`
}

// stamp is how documents print a run: date, commit and load.
func (r figureRun) stamp() string {
	or := func(s string) string {
		if s == "" {
			return "not recorded"
		}
		return s
	}
	return or(r.Date) + ", commit " + or(r.Commit) + ", load " + or(r.Load)
}

func loadFigures(t *testing.T) figureSource {
	t.Helper()
	b, err := os.ReadFile("figures.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var src figureSource
	if err := dec.Decode(&src); err != nil {
		t.Fatalf("docs/figures.json: %v", err)
	}
	return src
}

var (
	marker     = regexp.MustCompile(`(?s)<!--\s*(fig|run):([^\s>]*)\s*-->(.*?)<!--\s*/(fig|run)\s*-->`)
	markerOpen = regexp.MustCompile(`<!--\s*(fig|run):`)
	// lineStart finds markers that begin a line: CommonMark reads a line
	// starting with "<!--" as an HTML block, which ends the paragraph
	// (or list item) around it on GitHub.
	lineStart = regexp.MustCompile(`(?m)^[ \t]*(?:[-*+] |\d+\. )?<!--\s*(?:fig|run):`)
	figName   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*(\.[a-z0-9_-]+)*$`)
	runDate   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}\b`)
	commitID  = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	spaces    = regexp.MustCompile(`\s+`)
)

// quote is one marker in a document.
type quote struct {
	kind, name, text string
	where            string // file:line
}

func quotesIn(f mdFile) (qs []quote, problems []string) {
	text := proseOnly(f.text)
	ms := marker.FindAllStringSubmatchIndex(text, -1)
	if n := len(markerOpen.FindAllStringIndex(text, -1)); n != len(ms) {
		problems = append(problems, fmt.Sprintf("%s: %d figure markers open, %d are closed by <!-- /fig --> or <!-- /run -->", f.path, n, len(ms)))
	}
	for _, m := range lineStart.FindAllStringIndex(text, -1) {
		problems = append(problems, fmt.Sprintf("%s:%d: a marker begins the line, which GitHub renders as an HTML block: rewrap so that a word comes first", f.path, lineOf(f.text, m[0])))
	}
	for _, m := range ms {
		where := fmt.Sprintf("%s:%d", f.path, lineOf(f.text, m[0]))
		kind, closing := f.text[m[2]:m[3]], f.text[m[8]:m[9]]
		if kind != closing {
			problems = append(problems, fmt.Sprintf("%s: <!-- %s:... --> closed by <!-- /%s -->", where, kind, closing))
		}
		value := strings.TrimSpace(spaces.ReplaceAllString(f.text[m[6]:m[7]], " "))
		qs = append(qs, quote{kind: kind, name: f.text[m[4]:m[5]], text: value, where: where})
	}
	return qs, problems
}

// checkFigures returns every way the documents and the source disagree.
func checkFigures(src figureSource, files []mdFile) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	runs := map[string]figureRun{}
	for _, r := range src.Runs {
		if _, dup := runs[r.ID]; dup || !figName.MatchString(r.ID) {
			bad("run %q: ids are unique, lower-case, dot-separated", r.ID)
		}
		runs[r.ID] = r
		if r.Command == "" {
			bad("run %s: no command: name what produces the figure", r.ID)
		}
		if r.Untraced == "" {
			for field, v := range map[string]string{"date": r.Date, "commit": r.Commit, "load": r.Load} {
				if v == "" {
					bad("run %s: no %s (a run that cannot be traced says why in \"untraced\")", r.ID, field)
				}
			}
		}
		if r.Date != "" && !runDate.MatchString(r.Date) {
			bad("run %s: date %q does not start with YYYY-MM-DD", r.ID, r.Date)
		}
		if r.Commit != "" && !commitID.MatchString(r.Commit) {
			bad("run %s: commit %q is not a commit id", r.ID, r.Commit)
		}
	}
	figs := map[string]figure{}
	for _, f := range src.Figures {
		if _, dup := figs[f.Name]; dup || !figName.MatchString(f.Name) {
			bad("figure %q: names are unique, lower-case, dot-separated", f.Name)
		}
		figs[f.Name] = f
		if f.Value == "" || f.Unit == "" {
			bad("figure %s: value and unit are required", f.Name)
		}
		if _, ok := runs[f.Run]; !ok {
			bad("figure %s: run %q is not in the source", f.Name, f.Run)
		}
	}

	quoted := map[string][]quote{} // figure name -> its quotes
	stamped := map[string]bool{}   // run id -> quoted somewhere
	for _, f := range files {
		qs, p := quotesIn(f)
		problems = append(problems, p...)
		stampsHere := map[string]bool{}
		var figsHere []quote
		for _, q := range qs {
			switch q.kind {
			case "run":
				r, ok := runs[q.name]
				if !ok {
					bad("%s: run %q is not in docs/figures.json", q.where, q.name)
					continue
				}
				stampsHere[q.name], stamped[q.name] = true, true
				if q.text != r.stamp() {
					bad("%s: run %s is quoted as %q; docs/figures.json says %q", q.where, q.name, q.text, r.stamp())
				}
			case "fig":
				fg, ok := figs[q.name]
				if !ok {
					bad("%s: figure %q is not in docs/figures.json", q.where, q.name)
					continue
				}
				quoted[q.name] = append(quoted[q.name], q)
				figsHere = append(figsHere, q)
				if q.text != fg.Value {
					bad("%s: figure %s is quoted as %q; docs/figures.json says %q", q.where, q.name, q.text, fg.Value)
				}
			}
		}
		for _, q := range figsHere {
			if r := figs[q.name].Run; !stampsHere[r] {
				bad("%s: figure %s is quoted without its run's date, commit and load: add <!-- run:%s -->%s<!-- /run --> to %s",
					q.where, q.name, r, runs[r].stamp(), f.path)
			}
		}
	}
	for name, qs := range quoted {
		values := map[string][]string{}
		for _, q := range qs {
			values[q.text] = append(values[q.text], q.where)
		}
		if len(values) > 1 {
			var parts []string
			for v, at := range values {
				parts = append(parts, fmt.Sprintf("%q at %s", v, strings.Join(at, ", ")))
			}
			sort.Strings(parts)
			bad("figure %s is quoted with different values: %s", name, strings.Join(parts, "; "))
		}
	}
	for _, f := range src.Figures {
		if len(quoted[f.Name]) == 0 {
			bad("figure %s is in docs/figures.json but no document quotes it", f.Name)
		}
	}
	for _, r := range src.Runs {
		if !stamped[r.ID] {
			bad("run %s is in docs/figures.json but no document quotes its stamp", r.ID)
		}
	}
	sort.Strings(problems)
	return problems
}

func TestFiguresAgreeWithTheirSource(t *testing.T) {
	src := loadFigures(t)
	files := markdownFiles(t)
	for _, p := range checkFigures(src, files) {
		t.Error(p)
	}
	anchorsOf := map[string]map[string]bool{}
	for _, f := range files {
		anchorsOf[f.path] = anchors(f.text)
	}
	for _, r := range src.Runs {
		if r.Where == "" {
			t.Errorf("run %s: \"where\" names the document section with its full results", r.ID)
		} else if msg := checkLink("docs/figures.json", "../"+r.Where, anchorsOf); msg != "" {
			t.Errorf("run %s: where %q: %s", r.ID, r.Where, msg)
		}
		if r.Untraced != "" {
			t.Logf("untraced, to re-measure: run %s (%s): %s", r.ID, r.stamp(), r.Untraced)
		}
	}
}

// TestFigureCommitsExist checks that every run's commit is in the
// repository's history, when there is one to ask (a source archive or a
// shallow clone has not).
func TestFigureCommitsExist(t *testing.T) {
	out, err := exec.Command("git", "-C", repoRoot, "rev-parse", "--is-shallow-repository").Output()
	if err != nil || strings.TrimSpace(string(out)) != "false" {
		t.Skip("no full git history here")
	}
	for _, r := range loadFigures(t).Runs {
		if r.Commit == "" {
			continue
		}
		if err := exec.Command("git", "-C", repoRoot, "cat-file", "-e", r.Commit+"^{commit}").Run(); err != nil {
			t.Errorf("run %s: commit %s is not in this repository's history", r.ID, r.Commit)
		}
	}
}
