package docs

import (
	"strings"
	"testing"
)

// The checks above must catch each mistake they exist for; these cases
// feed them one mistake at a time.

func TestFigureCheckCatchesEachMistake(t *testing.T) {
	run := figureRun{ID: "r1", Date: "2026-11-30", Commit: "3f64a36", Load: "0.5-1.0", Command: "laraworker bench", Where: "docs/PERFORMANCE.md"}
	stamp := "<!-- run:r1 -->2026-11-30, commit 3f64a36, load 0.5-1.0<!-- /run -->"
	good := figureSource{Runs: []figureRun{run}, Figures: []figure{{Name: "a.b", Value: "12,772", Unit: "jobs/s", Run: "r1"}}}
	doc := func(path, text string) mdFile { return mdFile{path: path, text: text} }
	quoted := "x <!-- fig:a.b -->12,772<!-- /fig --> jobs/s (" + stamp + ")"
	if p := checkFigures(good, []mdFile{doc("README.md", quoted)}); len(p) != 0 {
		t.Fatalf("a correct quote was refused: %v", p)
	}
	// Line breaks inside a quote are a rewrap, not a change.
	if p := checkFigures(good, []mdFile{doc("README.md", strings.ReplaceAll(quoted, "commit 3f64a36", "commit\n3f64a36"))}); len(p) != 0 {
		t.Fatalf("a rewrapped stamp was refused: %v", p)
	}

	noLoad := good
	noLoad.Runs = []figureRun{run}
	noLoad.Runs[0].Load = ""
	untraced := noLoad
	untraced.Runs = []figureRun{noLoad.Runs[0]}
	untraced.Runs[0].Untraced = "load not recorded"
	noCommand := good
	noCommand.Runs = []figureRun{run}
	noCommand.Runs[0].Command = ""

	for _, c := range []struct {
		name  string
		src   figureSource
		files []mdFile
		want  string
	}{
		{"stale value", good, []mdFile{doc("README.md", strings.Replace(quoted, "12,772", "12,773", 1))}, `quoted as "12,773"`},
		{"two documents disagree", good, []mdFile{doc("README.md", quoted), doc("docs/P.md", strings.Replace(quoted, "12,772", "22", 1))}, "quoted with different values"},
		{"stale stamp", good, []mdFile{doc("README.md", strings.Replace(quoted, "load 0.5-1.0", "load 0.1", 1))}, "run r1 is quoted as"},
		{"no stamp in the document", good, []mdFile{doc("README.md", "<!-- fig:a.b -->12,772<!-- /fig -->"), doc("docs/P.md", stamp)}, "without its run's date, commit and load"},
		{"unknown figure", good, []mdFile{doc("README.md", quoted+"<!-- fig:a.c -->1<!-- /fig -->")}, `figure "a.c" is not in`},
		{"unclosed marker", good, []mdFile{doc("README.md", quoted+"<!-- fig:a.b -->12,772")}, "markers open"},
		{"no load", noLoad, []mdFile{doc("README.md", strings.Replace(quoted, "load 0.5-1.0", "load not recorded", 1))}, "run r1: no load"},
		{"no command", noCommand, []mdFile{doc("README.md", quoted)}, "run r1: no command"},
		{"marker at a line's start", good, []mdFile{doc("README.md", "x\n  "+quoted[2:])}, "begins the line"},
		{"figure nobody quotes", good, []mdFile{doc("README.md", stamp)}, "no document quotes it"},
	} {
		p := strings.Join(checkFigures(c.src, c.files), "\n")
		if !strings.Contains(p, c.want) {
			t.Errorf("%s: want a problem containing %q, got:\n%s", c.name, c.want, p)
		}
	}
	// A run that says why it cannot be traced passes, and prints as such.
	if p := checkFigures(untraced, []mdFile{doc("README.md", strings.Replace(quoted, "load 0.5-1.0", "load not recorded", 1))}); len(p) != 0 {
		t.Errorf("an untraced run with its reason was refused: %v", p)
	}
}

func TestPathAndLinkChecksCatchEachMistake(t *testing.T) {
	for span, wantProblem := range map[string]bool{
		"store/database/SQL.md":        false,
		"testdata/payloads/l*.json":    false,
		"config/queue.php":             false, // a Laravel app's file
		"net/http":                     false,
		"/proc/<pid>/stat":             false,
		"../..":                        false,
		"store/database/NOPE.md":       true,
		"testdata/payloads/nope*.json": true,
		"laravel/fixtures1267_test.go": true,
		"dbqueue/SQL.md":               true, // moved: the check names where to
		"e2e/":                         true,
		"../shared/spec/laravel-database-queue.md": true,
		"worker/does_not_exist_test.go":            true,
		"somewhere/else/entirely_test.go":          true,
	} {
		if got := checkRepoPath(span) != ""; got != wantProblem {
			t.Errorf("checkRepoPath(%q) reports a problem: %v, want %v", span, got, wantProblem)
		}
	}
	anchorsOf := map[string]map[string]bool{"docs/PERFORMANCE.md": {"dashboard": true}}
	for _, c := range []struct {
		from, target string
		wantProblem  bool
	}{
		{"README.md", "docs/PERFORMANCE.md#dashboard", false},
		{"docs/GUARANTEES.md", "PERFORMANCE.md", false},
		{"README.md", "docs/PERFORMANCE.md#nope", true},
		{"README.md", "docs/NOPE.md", true},
		{"docs/GUARANTEES.md", "../../shared/spec/x.md", true},
	} {
		if got := checkLink(c.from, c.target, anchorsOf) != ""; got != c.wantProblem {
			t.Errorf("checkLink(%q, %q) reports a problem: %v, want %v", c.from, c.target, got, c.wantProblem)
		}
	}
	for text, want := range map[string]bool{
		"see /work/shared/spec/x.md": true,
		"(../shared/fixtures/l10)":   true,
		"`../../shared/spec/a.md`":   true,
		"in /var/www/app and docs/x": false,
	} {
		if got := outside.MatchString(text); got != want {
			t.Errorf("outside.MatchString(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestAnchorsFollowGitHub(t *testing.T) {
	a := anchors("# Performance\n## Results (2026-11-30)\n### MariaDB 10.11 (the reference), after issue 15\n## Results (2026-11-30)\n" +
		"#### The same through `laraworker bench --workload shared-php` (MariaDB)\n```sh\n# not a heading\n```\n")
	for _, want := range []string{"performance", "results-2026-11-30", "results-2026-11-30-1", "mariadb-1011-the-reference-after-issue-15",
		"the-same-through-laraworker-bench---workload-shared-php-mariadb"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a comment in a code block was taken for a heading")
	}
}
