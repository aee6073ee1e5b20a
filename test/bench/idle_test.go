package bench

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Two rounds run the contenders in turn, the second in reverse order
// (so that no contender always gets the fresher machine), and
// --idle-time reports a worker's CPU per second on the empty queue: more
// than nothing (it polls) and far less than a core.
func TestBenchAlternatesAndMeasuresIdleCPU(t *testing.T) {
	t.Parallel() // waits on real time and child processes: beside the other waiting tests
	db := filepath.Join(t.TempDir(), "bench.sqlite")
	out, stderr, code := runBinary(t, "bench", "--db", "sqlite", "--db-database", db, "--only", "lw-c1,lw-c16",
		"--jobs", "100", "--rounds", "2", "--latency-jobs", "0", "--idle-time", "2s", "--idle-quiet-at", "5s", "--json")
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, out, stderr)
	}
	var order []string
	for _, m := range regexp.MustCompile(`(?m)^round (\d) (\S+)\s`).FindAllStringSubmatch(stderr, -1) {
		order = append(order, m[1]+" "+m[2])
	}
	if got, want := strings.Join(order, ", "), "1 lw-c1, 1 lw-c16, 2 lw-c16, 2 lw-c1"; got != want {
		t.Errorf("drains ran as %q, want %q", got, want)
	}
	var rep report
	if err := json.Unmarshal(jsonAfterTables(t, out), &rep); err != nil {
		t.Fatal(err)
	}
	// Both windows fall in the first minute here (--idle-quiet-at 5s), in
	// which the worker claims about once a second: each sees a claim. (A
	// worker whose poll has backed off may use no CPU at all in 2 s.)
	for _, name := range []string{"lw-first-minute", "lw"} {
		if v, ok := rep.IdleCPUMsPerSec[name]; !ok || v <= 0 || v > 500 {
			t.Errorf("idle CPU %v: want laraworker's %s, above 0 and below half a core", rep.IdleCPUMsPerSec, name)
		}
	}
}
