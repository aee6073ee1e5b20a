package bench

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A short soak on SQLite through the real binary: every pushed job is
// claimed and handled once, nothing is left or failed, the samples run
// from "start" to "end" with measured values, the verdict is clean and the
// tables are dropped.
func TestSoakOnSQLite(t *testing.T) {
	t.Parallel() // waits on real time and child processes: beside the other waiting tests
	db := filepath.Join(t.TempDir(), "soak.sqlite")
	out, stderr, code := runBinary(t, "bench", "soak", "--db", "sqlite", "--db-database", db,
		"--jobs", "20000", "--rate", "5000", "--every", "5000", "--warm-up", "2000", "--json")
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, out, stderr)
	}
	var rep soakReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Pushed != 20000 || rep.Claimed != 20000 || rep.Handled != 20000 || rep.Left != 0 || rep.Failed != 0 {
		t.Errorf("pushed %d, claimed %d, handled %d, left %d, failed %d", rep.Pushed, rep.Claimed, rep.Handled, rep.Left, rep.Failed)
	}
	var labels []string
	for _, sm := range rep.Samples {
		labels = append(labels, sm.At)
		if sm.HeapLiveBytes == 0 || sm.RSSBytes < sm.HeapLiveBytes || sm.Goroutines < 2 {
			t.Errorf("sample %s: heap %d, RSS %d, goroutines %d", sm.At, sm.HeapLiveBytes, sm.RSSBytes, sm.Goroutines)
		}
	}
	if got := strings.Join(labels, ","); got != "start,5000,10000,15000,end" {
		t.Errorf("samples %s, want start,5000,10000,15000,end", got)
	}
	if first := rep.Samples[0]; first.Handled < 2000 || first.Handled > 5000 {
		t.Errorf("the start sample was taken after %d jobs, want after the 2,000-job warm-up", first.Handled)
	}
	if end := rep.Samples[len(rep.Samples)-1]; end.Handled != 20000 || end.Backlog != 0 {
		t.Errorf("the end sample is not drained: %+v", end)
	}
	if rep.PushRate < 1000 || rep.PushRate > 5100 {
		t.Errorf("push rate %.0f jobs/s, asked 5,000", rep.PushRate)
	}
	if len(rep.Problems) != 0 || rep.GoroutinesAfter > rep.GoroutinesBefore {
		t.Errorf("problems %v; goroutines %d -> %d", rep.Problems, rep.GoroutinesBefore, rep.GoroutinesAfter)
	}
	if !strings.Contains(stderr, "bench soak: end") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}
	if tables := sqliteTables(t, db); len(tables) != 0 {
		t.Errorf("soak left tables behind: %v", tables)
	}
}

// cleanSoak is the report of a soak that went well.
func cleanSoak() *soakReport {
	return &soakReport{Jobs: 1000, Rate: 100, MaxHeapGrowth: 4 << 20, Pushed: 1000, Claimed: 1000, Handled: 1000,
		PushSec: 10, PushRate: 100, MaxPushLagSec: 0.01, GoroutinesBefore: 3, GoroutinesAfter: 3,
		Samples: []soakSample{
			{At: "start", ElapsedSec: 2, Pushed: 200, Handled: 100, Backlog: 100, HeapLiveBytes: 2 << 20},
			{At: "500", ElapsedSec: 6, Pushed: 600, Handled: 500, Backlog: 100, HeapLiveBytes: 3 << 20},
			{At: "end", ElapsedSec: 10.5, Pushed: 1000, Handled: 1000, HeapLiveBytes: 5 << 20},
		}}
}

// The verdict fails a soak for each way a worker can go wrong, and only
// then.
func TestSoakVerdict(t *testing.T) {
	ok := cleanSoak()
	ok.check()
	if len(ok.Problems) != 0 || !ok.RateHeld || ok.HeapGrowth != 3<<20 {
		t.Fatalf("a clean soak: problems %v, rate held %v, heap growth %d", ok.Problems, ok.RateHeld, ok.HeapGrowth)
	}
	for _, tc := range []struct {
		name  string
		spoil func(r *soakReport)
		want  string
	}{
		{"heap", func(r *soakReport) { r.Samples[2].HeapLiveBytes = 7<<20 + 1 }, "live heap grew by 5.00 MiB"},
		{"lost", func(r *soakReport) { r.Handled = 990 }, "1000 jobs pushed, 990 handled"},
		{"twice", func(r *soakReport) { r.Claimed, r.Handled = 1001, 1001 }, "1001 claims"},
		{"left", func(r *soakReport) { r.Left = 2 }, "2 jobs left"},
		{"failed", func(r *soakReport) { r.Failed = 1 }, "1 jobs in failed_jobs"},
		{"goroutines", func(r *soakReport) { r.GoroutinesAfter = 4 }, "3 before the soak, 4 after"},
		{"short", func(r *soakReport) { r.Pushed, r.Claimed, r.Handled = 900, 900, 900 }, "pushed 900 of 1000"},
		{"no end", func(r *soakReport) { r.Samples = r.Samples[:2] }, "no start and end samples"},
	} {
		r := cleanSoak()
		tc.spoil(r)
		r.check()
		if !strings.Contains(strings.Join(r.Problems, "; "), tc.want) {
			t.Errorf("%s: problems %v, want one with %q", tc.name, r.Problems, tc.want)
		}
	}
	// A backlog that came and went still holds the rate; one the worker
	// needs more than 5 s to drain after the last push, or a producer
	// below 95% of the rate, does not. Neither fails the soak.
	busy := cleanSoak()
	busy.Samples[1].Backlog = 5000
	busy.check()
	if !busy.RateHeld || busy.MaxBacklog != 5000 {
		t.Errorf("a passing backlog: rate held %v, max backlog %d", busy.RateHeld, busy.MaxBacklog)
	}
	for name, spoil := range map[string]func(r *soakReport){
		"slow drain":    func(r *soakReport) { r.Samples[2].ElapsedSec = 15.1 },
		"slow producer": func(r *soakReport) { r.PushRate = 94 },
	} {
		r := cleanSoak()
		spoil(r)
		r.check()
		if r.RateHeld || len(r.Problems) != 0 {
			t.Errorf("%s: rate held %v, problems %v (a rate not held is reported, not failed)", name, r.RateHeld, r.Problems)
		}
	}
}

func TestSoakFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--jobs", "0"}, "--jobs must be positive"},
		{[]string{"--rate", "-5"}, "--rate must be positive"},
		{[]string{"--jobs", "100", "--warm-up", "100"}, "--warm-up 100 must be at least 0 and less than --jobs 100"},
		{[]string{"--max-heap-growth", "4MB"}, `--max-heap-growth: "4MB" is not a size`},
	} {
		_, stderr, code := runInProcess(t, append([]string{"bench", "soak", "--db", "sqlite", "--db-database", filepath.Join(t.TempDir(), "x")}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: status %d, %q; want status 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"4194304": 4 << 20, "4MiB": 4 << 20, "512 KiB": 512 << 10, "1GiB": 1 << 30, "1.5MiB": 3 << 19, "100B": 100} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "4MB", "-1", "MiB", "four"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}
