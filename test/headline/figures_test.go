package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A record of two accepted rounds and a rejected one, with every
// headline metric.
func testRecord() *record {
	rec := &record{Commit: "abc1234", MaxLoad: 1.5, Command: "headline",
		Started: time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC), Finished: time.Date(2026, 12, 6, 10, 40, 0, 0, time.UTC)}
	for i, v := range []float64{1000, 3000, 99999} {
		r := roundRecord{Round: i + 1, Accepted: i < 2, Metrics: map[string]float64{},
			Blocks: []blockRecord{{Name: "mariadb", LoadBefore: 0.5 + float64(i), LoadAfter: 1.2 + float64(i)}}}
		for _, f := range headlineFigures {
			r.Metrics[f.key] = v
		}
		rec.Rounds = append(rec.Rounds, r)
	}
	rec.summarize()
	return rec
}

func TestSummaryIsTheMedianWithTheSpreadOfTheAcceptedRounds(t *testing.T) {
	rec := testRecord()
	if got := rec.Summary["mariadb.php1.jobs_per_s"].Value; got != "2,000 (1,000-3,000)" {
		t.Errorf("summary %q, want 2,000 (1,000-3,000): the rejected round's 99,999 left out", got)
	}
	if st := rec.stamp(); st.Load != "0.50-2.20" || st.ID != "headline.2026-12-06" || st.Date != "2026-12-06 10:00-10:40 UTC" {
		t.Errorf("stamp %+v: want the loads of the accepted rounds only", st)
	}
	for v, want := range map[float64]string{0.456: "0.46", 12.34: "12.3", 123.4: "123", 14789.4: "14,789", 1234567: "1,234,567"} {
		if got := number(v); got != want {
			t.Errorf("number(%v) = %q, want %q", v, got, want)
		}
	}
}

// writeFigures replaces only the headline entries of figures.json, and
// writeTable only what lies between the markers.
func TestWritersTouchOnlyTheHeadline(t *testing.T) {
	dir := t.TempDir()
	orig, err := os.ReadFile("../../docs/figures.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "figures.json")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	rec := testRecord()
	for range 2 { // a second run replaces the first
		if err := writeFigures(path, rec); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	var src struct {
		Runs    []map[string]any `json:"runs"`
		Figures []map[string]any `json:"figures"`
	}
	if err := json.Unmarshal(got, &src); err != nil {
		t.Fatalf("figures.json no longer parses: %v", err)
	}
	runs, figs := 0, 0
	for _, r := range src.Runs {
		if strings.HasPrefix(r["id"].(string), "headline.") {
			runs++
		}
	}
	for _, f := range src.Figures {
		if strings.HasPrefix(f["name"].(string), "headline.") {
			figs++
			if f["value"] != "2,000 (1,000-3,000)" || f["run"] != "headline.2026-12-06" {
				t.Errorf("figure %v", f)
			}
		}
	}
	if runs != 1 || figs != len(headlineFigures) {
		t.Errorf("%d headline runs and %d figures, want 1 and %d", runs, figs, len(headlineFigures))
	}
	// Every other entry is as it was, byte for byte (the headline entries
	// of the real file, once a run wrote them, are replaced).
	before := withoutHeadlineEntries(string(orig))
	after := string(got)
	for _, line := range before {
		if !strings.Contains(after, line) {
			t.Fatalf("line lost or changed: %q", line)
		}
	}

	doc := filepath.Join(dir, "PERFORMANCE.md")
	text := "# P\n\nbefore\n" + tableBegin + "\npending\n" + tableEnd + "\nafter\n"
	if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := writeTable(doc, rec); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := os.ReadFile(doc)
	s := string(out)
	if !strings.HasPrefix(s, "# P\n\nbefore\n"+tableBegin) || !strings.HasSuffix(s, tableEnd+"\nafter\n") || strings.Contains(s, "pending") {
		t.Errorf("the table is not just between the markers:\n%s", s)
	}
	if !strings.Contains(s, "<!-- fig:headline.mariadb.c128.over_php1 -->2,000 (1,000-3,000)<!-- /fig -->") ||
		!strings.Contains(s, "<!-- run:headline.2026-12-06 -->2026-12-06 10:00-10:40 UTC, commit abc1234, load 0.50-2.20<!-- /run -->") {
		t.Errorf("the table lacks the figures or the run's stamp:\n%s", s)
	}
}

// withoutHeadlineEntries is figures.json's lines less those of its
// headline entries: the one-line figures and the lines of the run object.
func withoutHeadlineEntries(text string) []string {
	var out []string
	inRun := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, `"id": "headline.`):
			inRun = true
		case inRun && strings.HasPrefix(trimmed, "}"):
			inRun = false
		case !inRun && !strings.Contains(line, `"headline.`):
			out = append(out, line)
		}
	}
	return out
}
