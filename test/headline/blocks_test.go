package main

import (
	"encoding/json"
	"testing"
)

// TestLastJSONReadsEitherReportForm: the reports the headline keeps are
// found both when a program prints an indented report after its tables
// (laraworker bench, riverbench, asynqbench) and when it prints one line
// (`laraworker bench pickup --json`, whose reports a run of 2026-12-06
// lost as "error": "<nil>"); output without a report is an error.
func TestLastJSONReadsEitherReportForm(t *testing.T) {
	for _, c := range []struct {
		name, out, wantKey string
	}{
		{"indented after a table", "| a | b |\n|---|---|\n{\n  \"jobs\": 3\n}\n", "jobs"},
		{"one line after log lines", "pick-up latency, one worker\n{\"p99_ms\":41.85,\"missing\":0}\n", "p99_ms"},
		{"one line alone", "{\"p50_ms\":1}", "p50_ms"},
	} {
		raw, err := lastJSON([]byte(c.out))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil || m[c.wantKey] == nil {
			t.Errorf("%s: got %s (%v), want the report with %q", c.name, raw, err, c.wantKey)
		}
	}
	for _, out := range []string{"", "no report here\n", "{ not json\n"} {
		if raw, err := lastJSON([]byte(out)); err == nil {
			t.Errorf("%q: got %s, want an error", out, raw)
		}
	}
}
