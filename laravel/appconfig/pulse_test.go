package appconfig

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// pulseApp is the test app with stand-ins that make laravel/pulse look
// installed (its class, its service provider registered) and a
// config/pulse.php; their content is the test's.
func pulseApp(t *testing.T, env, pulseConfig string) string {
	t.Helper()
	app := copyTestApp(t)
	db := filepath.Join(app, "database", "app.sqlite")
	writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\n"+env)
	writeFile(t, filepath.Join(app, "pulse-installed.php"), `<?php
namespace Laravel\Pulse;
class Pulse {}
class PulseServiceProvider extends \Illuminate\Support\ServiceProvider {}
`)
	autoload, err := os.ReadFile(filepath.Join(app, "bootstrap", "autoload.php"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(app, "bootstrap", "autoload.php"), string(autoload)+"\nrequire_once dirname(__DIR__).'/pulse-installed.php';\n")
	appConfig, err := os.ReadFile(filepath.Join(app, "config", "app.php"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(app, "config", "app.php"), strings.Replace(string(appConfig), "'providers' => [", "'providers' => [\n        Laravel\\Pulse\\PulseServiceProvider::class,", 1))
	writeFile(t, filepath.Join(app, "config", "pulse.php"), pulseConfig)
	return app
}

// A config/pulse.php as the package publishes it, in the parts the Queues
// and SlowJobs recorders and the ingest read, with a threshold per
// pattern; the storage connection is another database connection.
const pulseConfigFile = `<?php
use Laravel\Pulse\Recorders;
return [
    'enabled' => env('PULSE_ENABLED', true),
    'storage' => [
        'driver' => env('PULSE_STORAGE_DRIVER', 'database'),
        'database' => ['connection' => env('PULSE_DB_CONNECTION', null), 'chunk' => 1000],
    ],
    'ingest' => [
        'driver' => env('PULSE_INGEST_DRIVER', 'storage'),
        'buffer' => env('PULSE_INGEST_BUFFER', 5_000),
        'trim' => ['lottery' => [1, 1_000], 'keep' => '7 days'],
        'redis' => ['connection' => env('PULSE_REDIS_CONNECTION'), 'chunk' => 1000],
    ],
    'recorders' => [
        Recorders\Queues::class => [
            'enabled' => env('PULSE_QUEUES_ENABLED', true),
            'sample_rate' => env('PULSE_QUEUES_SAMPLE_RATE', 1),
            'ignore' => ['/^App\\\\Jobs\\\\Internal/'],
        ],
        Recorders\SlowJobs::class => [
            'enabled' => env('PULSE_SLOW_JOBS_ENABLED', true),
            'sample_rate' => env('PULSE_SLOW_JOBS_SAMPLE_RATE', 1),
            'threshold' => ['#^App\\\\Jobs\\\\Report#' => 3000, 'default' => env('PULSE_SLOW_JOBS_THRESHOLD', 1000)],
            'ignore' => [],
        ],
        Recorders\Servers::class => ['server_name' => 'web-1'],
    ],
];
`

// TestPulseConfig: with Pulse installed, its recorders' settings come
// back as PHP resolves them (env() strings included; a threshold per
// pattern in the config's order), and a storage connection other than
// the queue's comes with its settings and password, which never print.
func TestPulseConfig(t *testing.T) {
	if !hasPHP() {
		t.Skip("php with Laravel is not installed")
	}
	other := filepath.Join(t.TempDir(), "pulse.sqlite")
	app := pulseApp(t, "PULSE_QUEUES_SAMPLE_RATE=0.25\nPULSE_DB_CONNECTION=pulse\nPULSE_INGEST_DRIVER=redis\n", pulseConfigFile)
	dbConfig, err := os.ReadFile(filepath.Join(app, "config", "database.php"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(app, "config", "database.php"), strings.Replace(string(dbConfig), "'connections' => [",
		"'connections' => [\n        'pulse' => ['driver' => 'sqlite', 'database' => '"+other+"', 'prefix' => 'obs_', 'password' => 'pulse-secret'],", 1))
	_, info, err := Load(context.Background(), Options{AppDir: app, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	p := info.Pulse
	if p == nil || info.PulseErr != nil {
		t.Fatalf("Pulse %+v (%v): want it read", p, info.PulseErr)
	}
	if !p.Registered || !p.Enabled || p.DBConnection != "pulse" || p.Ingest["driver"] != "redis" {
		t.Errorf("Pulse %+v: want registered, enabled, on connection pulse, redis ingest", p)
	}
	if want := map[string]any{"sample_rate": "0.25", "ignore": []any{`/^App\\Jobs\\Internal/`}, "threshold": nil}; !reflect.DeepEqual(p.Queues, want) {
		t.Errorf("Queues recorder %#v, want %#v", p.Queues, want)
	}
	wantThreshold := []any{map[string]any{"pattern": `#^App\\Jobs\\Report#`, "ms": 3000.0}, map[string]any{"pattern": "default", "ms": 1000.0}}
	if got := p.SlowJobs["threshold"]; !reflect.DeepEqual(got, wantThreshold) {
		t.Errorf("SlowJobs threshold %#v, want %#v", got, wantThreshold)
	}
	if p.DB == nil || p.DB.Driver != EngineSQLite || p.DB.Database != other || p.DB.TablePrefix != "obs_" || p.DB.Password.Reveal() != "pulse-secret" {
		t.Fatalf("Pulse's database %+v: want the pulse connection", p.DB)
	}
	if printed := strings.Join([]string{p.DB.Password.String(), info.Describe()}, " "); strings.Contains(printed, "pulse-secret") {
		t.Errorf("the password of Pulse's connection prints: %s", printed)
	}
}

// TestPulseRecorderNotRegistered: a recorder whose enabled is false (an
// env string PHP reads as false) is not registered, as Pulse::register
// skips it; without Pulse installed there is no Pulse config at all.
func TestPulseRecorderNotRegistered(t *testing.T) {
	if !hasPHP() {
		t.Skip("php with Laravel is not installed")
	}
	app := pulseApp(t, "PULSE_SLOW_JOBS_ENABLED=false\n", pulseConfigFile)
	_, info, err := Load(context.Background(), Options{AppDir: app, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if p := info.Pulse; p == nil || p.SlowJobs != nil || p.Queues == nil || p.DB != nil || p.DBConnection != "sqlite" {
		t.Errorf("Pulse %+v: want the Queues recorder alone, on the queue's own connection", p)
	}
	_, info, err = Load(context.Background(), Options{AppDir: copyTestApp(t), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Pulse != nil || info.HorizonWaits != nil {
		t.Errorf("without Pulse and Horizon: Pulse %+v, waits %v; want none", info.Pulse, info.HorizonWaits)
	}
}

// TestHorizonWaits: with Horizon installed, config('horizon.waits') comes
// back as PHP resolves it (env() included), whatever the queue
// connection served; an app whose config sets none gives an empty map.
func TestHorizonWaits(t *testing.T) {
	if !hasPHP() {
		t.Skip("php with Laravel is not installed")
	}
	for _, c := range []struct {
		config string
		want   map[string]any
	}{
		{"<?php\nreturn ['waits' => ['redis:default' => 60, 'database:emails' => env('EMAILS_WAIT', 120), 'redis:low' => 0]];\n",
			map[string]any{"redis:default": 60.0, "database:emails": "300", "redis:low": 0.0}},
		{"<?php\nreturn ['prefix' => 'app_horizon:'];\n", map[string]any{}},
	} {
		app := copyTestApp(t)
		writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+filepath.Join(app, "database", "app.sqlite")+"\nEMAILS_WAIT=300\n")
		writeFile(t, filepath.Join(app, "horizon-installed.php"), "<?php\nnamespace Laravel\\Horizon;\nclass Horizon {}\n")
		autoload, err := os.ReadFile(filepath.Join(app, "bootstrap", "autoload.php"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(app, "bootstrap", "autoload.php"), string(autoload)+"\nrequire_once dirname(__DIR__).'/horizon-installed.php';\n")
		writeFile(t, filepath.Join(app, "config", "horizon.php"), c.config)
		_, info, err := Load(context.Background(), Options{AppDir: app, Environ: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if info.HorizonWaits == nil || !reflect.DeepEqual(info.HorizonWaits, c.want) {
			t.Errorf("horizon.waits %#v, want %#v", info.HorizonWaits, c.want)
		}
	}
}
