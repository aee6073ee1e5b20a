package pulse

import (
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// pulseConfig is the config a Pulse app with the package's defaults
// gives (read-config.php's shape).
func pulseConfig() *appconfig.PulseConfig {
	return &appconfig.PulseConfig{
		Registered: true, Enabled: true,
		Queues:   map[string]any{"sample_rate": 1.0, "ignore": []any{}},
		SlowJobs: map[string]any{"sample_rate": 1.0, "ignore": []any{}, "threshold": 1000.0},
		Ingest:   map[string]any{"driver": "storage", "buffer": 5000.0, "trim_lottery": []any{1.0, 1000.0}, "trim_keep": "7 days"},
		Storage:  map[string]any{"driver": "database", "chunk": 1000.0},
	}
}

// TestFromLaravelDefaults: the package's defaults read as Pulse reads
// them, env() strings included.
func TestFromLaravelDefaults(t *testing.T) {
	p := pulseConfig()
	p.Queues["sample_rate"] = "0.5" // PULSE_QUEUES_SAMPLE_RATE=0.5
	p.SlowJobs["threshold"] = []any{map[string]any{"pattern": `/Report$/`, "ms": 3000.0}, map[string]any{"pattern": "/Export/", "ms": "5000"},
		map[string]any{"pattern": "default", "ms": "250"}}
	p.RedisPrefix = "app_database_"
	s, active, err := FromLaravel(p)
	if err != nil || !active {
		t.Fatalf("active %v, %v", active, err)
	}
	if s.Queues.SampleRate != 0.5 || s.Buffer != 5000 || s.TrimChances != 1 || s.TrimOutOf != 1000 || s.Chunk != 1000 ||
		s.StorageKeep != 7*24*time.Hour || s.StreamKeep.Age != 7*24*time.Hour || s.RedisConnection != "default" || s.Stream != "app_database_laravel:pulse:ingest" {
		t.Errorf("settings %+v", s)
	}
	for name, want := range map[string]time.Duration{`App\Jobs\MonthlyReport`: 3 * time.Second, `App\Jobs\ExportReport`: 3 * time.Second,
		`App\Jobs\Export`: 5 * time.Second, `App\Jobs\Sync`: 250 * time.Millisecond} {
		if got := s.SlowJobs.threshold(name); got != want {
			t.Errorf("threshold of %s: %s, want %s (the first pattern that matches, else default)", name, got, want)
		}
	}
}

// TestFromLaravelInactive: Pulse records nothing for a job when it is
// not registered, disabled, has neither recorder, or ingests to null.
func TestFromLaravelInactive(t *testing.T) {
	for name, change := range map[string]func(p *appconfig.PulseConfig){
		"not registered": func(p *appconfig.PulseConfig) { p.Registered = false },
		"disabled":       func(p *appconfig.PulseConfig) { p.Enabled = false },
		"no recorders":   func(p *appconfig.PulseConfig) { p.Queues, p.SlowJobs = nil, nil },
		"null ingest":    func(p *appconfig.PulseConfig) { p.Ingest["driver"] = "null" },
	} {
		p := pulseConfig()
		change(p)
		if _, active, err := FromLaravel(p); active || err != nil {
			t.Errorf("%s: active %v, err %v; want inactive", name, active, err)
		}
	}
	if _, active, _ := FromLaravel(nil); active {
		t.Error("no Pulse: active")
	}
}

// TestFromLaravelErrors: a setting Go cannot honour is an error naming
// it, at start.
func TestFromLaravelErrors(t *testing.T) {
	for want, change := range map[string]func(p *appconfig.PulseConfig){
		"pulse.ingest.driver":                func(p *appconfig.PulseConfig) { p.Ingest["driver"] = "kafka" },
		"pulse.recorders.Queues.ignore[0]":   func(p *appconfig.PulseConfig) { p.Queues["ignore"] = []any{`/(?<=App)Jobs/`} },
		"pulse.recorders.SlowJobs.threshold": func(p *appconfig.PulseConfig) { p.SlowJobs["threshold"] = "slow" },
		"pulse.recorders.Queues.sample_rate": func(p *appconfig.PulseConfig) { p.Queues["sample_rate"] = "half" },
		"pulse.ingest.trim.keep":             func(p *appconfig.PulseConfig) { p.Ingest["trim_keep"] = "1 month" },
		"pulse.storage.driver":               func(p *appconfig.PulseConfig) { p.Storage["driver"] = "dynamodb" },
		"pulse.ingest.trim.lottery":          func(p *appconfig.PulseConfig) { p.Ingest["trim_lottery"] = []any{1.0} },
		"pulse.recorders.SlowJobs.threshold: p": func(p *appconfig.PulseConfig) {
			p.SlowJobs["threshold"] = []any{map[string]any{"pattern": "(x)\\1", "ms": 1.0}}
		},
	} {
		p := pulseConfig()
		change(p)
		_, _, err := FromLaravel(p)
		if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(want, ": p")) {
			t.Errorf("want an error naming %s, got %v", want, err)
		}
	}
}
