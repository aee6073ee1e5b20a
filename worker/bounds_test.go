package worker

import (
	"fmt"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/prometheus/client_golang/prometheus"
)

// The per-job state a worker keeps must stay bounded over its life.

func TestSkipSetExpiresAndIsBounded(t *testing.T) {
	var s skipSet
	t0 := time.Unix(1_700_000_000, 0)
	for i := range maxSkipped + 50 {
		s.add(int64(i), t0)
	}
	ids := s.list(t0)
	if len(ids) != maxSkipped || ids[0] != 50 {
		t.Fatalf("kept %d ids starting at %d, want the newest %d", len(ids), ids[0], maxSkipped)
	}
	s.add(99999, t0.Add(skipFor-time.Second))
	if ids := s.list(t0.Add(skipFor)); len(ids) != 1 || ids[0] != 99999 {
		t.Fatalf("after skipFor, want only the newer entry, got %d ids", len(ids))
	}
	if ids := s.list(t0.Add(2 * skipFor)); ids != nil {
		t.Fatalf("want nothing excluded once every entry expired, got %v", ids)
	}
}

func TestMetricsClassLabelComesFromTheRegistry(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	reg := handlers.NewRegistry()
	reg.Handle(classA, handlers.Noop())
	push(t, q, "", `app\jobs\SENDMAIL`) // PHP class names are case-insensitive
	for i := range 3 {
		push(t, q, "", fmt.Sprintf(`Evil\Class%d`, i))
	}
	promReg := prometheus.NewRegistry()
	opts := testConfig()
	opts.Unrouted = UnroutedFail
	opts.Metrics = NewMetrics(promReg)
	w, err := New(q, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	runWorker(t, w, 30*time.Second)
	families, err := promReg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "laraworker_jobs_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "class" {
					classes[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	if len(classes) != 2 || classes[classA] != 1 || classes["other"] != 3 {
		t.Fatalf("class labels %v, want %s=1 and other=3", classes, classA)
	}
}
