package bench

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A drain that does not stop by itself is killed at its limit, and the
// error says so (bigDrain then counts what it drained instead of failing
// the workload); one that stops in time is not.
func TestRunProcsSaysWhenItKilledAtTheLimit(t *testing.T) {
	b := &runner{dir: t.TempDir()}
	st, err := b.runProcs(context.Background(), []*exec.Cmd{exec.Command("sleep", "60")}, 200*time.Millisecond)
	if !errors.Is(err, errKilledAtLimit) {
		t.Fatalf("err = %v, want errKilledAtLimit", err)
	}
	if st.wall > 30*time.Second {
		t.Fatalf("runProcs waited %s for a command killed at 200ms", st.wall)
	}
	if _, err := b.runProcs(context.Background(), []*exec.Cmd{exec.Command("true")}, time.Minute); err != nil {
		t.Fatalf("a command that exits in time: %v", err)
	}
	_, err = b.runProcs(context.Background(), []*exec.Cmd{exec.Command("false")}, time.Minute)
	if err == nil || errors.Is(err, errKilledAtLimit) {
		t.Fatalf("a command that fails in time: err = %v, want its failure and no kill", err)
	}
}

// The report names the rounds whose drain was killed.
func TestWorkloadReportSaysWhichRoundsWereKilled(t *testing.T) {
	w := &workloadResult{Workload: wlDelayed, Contender: "lw-c128", Setup: "20000 ready jobs behind 10000000 delayed ones", Baseline: "alone"}
	w.add(drainMeasure{Jobs: 0, Killed: true, WallSec: 150}, drainMeasure{Jobs: 20000, JobsPerSec: 20000})
	w.add(drainMeasure{Jobs: 20000, JobsPerSec: 5000}, drainMeasure{Jobs: 20000, JobsPerSec: 20000})
	var out bytes.Buffer
	printWorkloads(&out, []*workloadResult{w})
	if !strings.Contains(out.String(), "1 of 2 rounds had a drain killed") {
		t.Fatalf("report does not name the killed round:\n%s", out.String())
	}
	out.Reset()
	w.Rounds[0].Load.Killed = false
	printWorkloads(&out, []*workloadResult{w})
	if strings.Contains(out.String(), "killed") {
		t.Fatalf("report names a kill that did not happen:\n%s", out.String())
	}
}

// The large-table report marks a killed drain's rate.
func TestBigTableReportMarksAKilledDrain(t *testing.T) {
	r := &bigResult{Delayed: 10000000, Ready: 20000, Cases: []bigCase{
		{Contender: "lw-c128", Delayed: "older", Index: "default", Drain: drainMeasure{Killed: true, WallSec: 150}},
		{Contender: "raw-b128", Delayed: "older", Index: "default", Drain: drainMeasure{Jobs: 20000, JobsPerSec: 900}},
	}}
	var out bytes.Buffer
	r.print(&out)
	if n := strings.Count(out.String(), "(killed)"); n != 1 {
		t.Fatalf("%d drains marked killed, want 1:\n%s", n, out.String())
	}
}

// A run killed at its limit cuts the round; any other failure fails it.
func TestCutAtLimitOnlyTakesTheKill(t *testing.T) {
	var m drainMeasure
	if err := m.cutAtLimit(errors.Join(errors.New("signal: killed"), errKilledAtLimit)); err != nil || !m.Killed {
		t.Fatalf("killed at the limit: err = %v, Killed = %v; want nil, true", err, m.Killed)
	}
	m = drainMeasure{}
	failure := errors.New("exit status 1")
	if err := m.cutAtLimit(failure); err != failure || m.Killed {
		t.Fatalf("a failure: err = %v, Killed = %v; want the failure, false", err, m.Killed)
	}
}
