package worker

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetricsStartAtZero: every series whose labels are known at start
// exists at 0 before its first event, so that alerts on rates and on
// "absent" have data from the start.
func TestMetricsStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.watch([]string{"default", "mail"}, []string{classA})
	want := `
laraworker_config_errors_total{kind="app_key"} 0
laraworker_config_errors_total{kind="debounce"} 0
laraworker_config_errors_total{kind="middleware"} 0
laraworker_config_errors_total{kind="permission"} 0
laraworker_config_errors_total{kind="schema"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`# HELP laraworker_config_errors_total Configuration problems met (app_key, schema, permission, middleware, debounce): jobs given back or writes retried, never failed.
# TYPE laraworker_config_errors_total counter`+want), "laraworker_config_errors_total"); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		vec  *prometheus.CounterVec
		name string
		n    int
	}{
		{m.lost, "lost reservations", len(writeOps) + 1},
		{m.dropped, "dropped outcomes", len(writeOps)},
		{m.writeErrors, "write errors", len(writeOps)},
		{m.jobs, "jobs", 2 * 2 * len(watchedOutcomes)}, // 2 queues x (classA, other)
		{m.interrupted, "interruptions", 2 * 2 * 2},    // x restored, counted
	} {
		if got := testutil.CollectAndCount(c.vec); got != c.n {
			t.Errorf("%s: %d series at start, want %d", c.name, got, c.n)
		}
	}
	for _, series := range []prometheus.Counter{
		m.jobs.WithLabelValues(classA, "mail", "failed"), m.jobs.WithLabelValues("other", "default", "done"),
		m.lost.WithLabelValues("extend"), m.dropped.WithLabelValues("delete"),
	} {
		if v := testutil.ToFloat64(series); v != 0 {
			t.Errorf("a series starts at %v", v)
		}
	}
}
