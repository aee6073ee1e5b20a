package longwait

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestThresholdsAsHorizonReadsThem: a queue the waits do not name waits
// 60 s; 0 turns its check off; flags, a file and Horizon's config (env()
// strings included) give the same thresholds.
func TestThresholdsAsHorizonReadsThem(t *testing.T) {
	want := Thresholds{"redis:default": time.Minute, "database:emails": 90 * time.Second, "redis:low": 0}
	flags, err := ParseFlags([]string{"redis:default=60", "database:emails=1m30s", "redis:low=0"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "waits.json")
	os.WriteFile(file, []byte(`{"redis:default": 60, "database:emails": 90, "redis:low": 0}`), 0o644)
	fromFile, err := ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	horizon, err := FromHorizon(map[string]any{"redis:default": 60.0, "database:emails": "90", "redis:low": 0.0})
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]Thresholds{"flags": flags, "file": fromFile, "horizon": horizon} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	for _, c := range []struct {
		conn, queue string
		want        time.Duration
		on          bool
	}{{"redis", "default", time.Minute, true}, {"redis", "low", 0, false}, {"redis", "other", DefaultThreshold, true}, {"database", "emails", 90 * time.Second, true}} {
		if d, on := want.Of(c.conn, c.queue); d != c.want || on != c.on {
			t.Errorf("%s:%s: %s %v, want %s %v", c.conn, c.queue, d, on, c.want, c.on)
		}
	}
	if q, o := want.Queues("redis"), want.Others("redis"); !reflect.DeepEqual(q, []string{"default", "low"}) || !reflect.DeepEqual(o, []string{"database:emails"}) {
		t.Errorf("redis's queues %v, others %v", q, o)
	}
}

// TestThresholdErrors name the value.
func TestThresholdErrors(t *testing.T) {
	for _, bad := range []string{"default=60", "redis:default", "redis:default=soon", "redis:default=-5", ":default=1"} {
		if _, err := ParseFlags([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v, want an error naming it", bad, err)
		}
	}
	if _, err := FromHorizon(map[string]any{"redis:default": []any{1.0}}); err == nil || !strings.Contains(err.Error(), "horizon.waits: redis:default") {
		t.Errorf("a list in horizon.waits: %v", err)
	}
	file := filepath.Join(t.TempDir(), "waits.json")
	os.WriteFile(file, []byte(`["redis:default"]`), 0o644)
	if _, err := ReadFile(file); err == nil || !strings.Contains(err.Error(), "want a JSON object") {
		t.Errorf("a list in the file: %v", err)
	}
}
