package console

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/console/internal/testapp"
	"github.com/laraworker/laraworker/internal/pulse/pulsetest"
	"github.com/laraworker/laraworker/internal/testutil/phptest"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/redis/go-redis/v9"
)

// pulseConfigPHP is a config/pulse.php in the package's shape, in the
// parts Go reads; %s is the Queues recorder's ignore list.
const pulseConfigPHP = `<?php
return [
    'enabled' => env('PULSE_ENABLED', true),
    'storage' => ['driver' => 'database', 'database' => ['connection' => env('PULSE_DB_CONNECTION'), 'chunk' => 1000]],
    'ingest' => ['driver' => env('PULSE_INGEST_DRIVER', 'storage'), 'buffer' => 5000, 'trim' => ['lottery' => [1, 1000], 'keep' => '7 days'],
        'redis' => ['connection' => env('PULSE_REDIS_CONNECTION'), 'chunk' => 1000]],
    'recorders' => [
        Laravel\Pulse\Recorders\Queues::class => ['enabled' => true, 'sample_rate' => 1, 'ignore' => [%s]],
        Laravel\Pulse\Recorders\SlowJobs::class => ['enabled' => true, 'sample_rate' => 1, 'threshold' => env('PULSE_SLOW_JOBS_THRESHOLD', 1000), 'ignore' => []],
    ],
];
`

// pulseApp is the Laravel test app, on SQLite, with stand-ins that make
// laravel/pulse look installed (its class, its provider registered; their
// content is the test's: Pulse needs Laravel 10+) and a config/pulse.php
// whose Queues recorder ignores ignore. It returns the app and its queue,
// with the queue's and Pulse's tables created.
func pulseApp(t *testing.T, ignore, env string) (string, *database.Queue) {
	t.Helper()
	phptest.NeedPHP(t)
	app := phptest.CopyAppWithoutBridge(t)
	write := func(rel, content string) {
		if err := os.WriteFile(filepath.Join(app, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".env", "DB_CONNECTION=sqlite\nDB_DATABASE="+filepath.Join(app, "database", "app.sqlite")+"\nAPP_KEY="+testapp.FixtureKey+"\nCACHE_DRIVER=file\n"+env)
	write("pulse-installed.php", "<?php\nnamespace Laravel\\Pulse;\nclass Pulse {}\nclass PulseServiceProvider extends \\Illuminate\\Support\\ServiceProvider {}\n")
	autoload, _ := os.ReadFile(filepath.Join(app, "bootstrap", "autoload.php"))
	write(filepath.Join("bootstrap", "autoload.php"), string(autoload)+"\nrequire_once dirname(__DIR__).'/pulse-installed.php';\n")
	appConfig, _ := os.ReadFile(filepath.Join(app, "config", "app.php"))
	write(filepath.Join("config", "app.php"), strings.Replace(string(appConfig), "'providers' => [", "'providers' => [\n        Laravel\\Pulse\\PulseServiceProvider::class,", 1))
	write(filepath.Join("config", "pulse.php"), strings.Replace(pulseConfigPHP, "%s", ignore, 1))
	cfg, _, err := appconfig.Load(context.Background(), appconfig.Options{AppDir: app, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := database.Open(context.Background(), cfg, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	if err := q.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	pulsetest.CreateTables(t, q.DB(), appconfig.EngineSQLite, "")
	return app, q
}

// TestWorkRecordsInPulse: `work` in an app that runs Pulse records, with
// no flag, the Queues card's counts of the jobs it runs on
// "connection:queue" and a slow job past PULSE_SLOW_JOBS_THRESHOLD (read
// through the app's PHP), in Pulse's tables, and says so at start.
func TestWorkRecordsInPulse(t *testing.T) {
	app, q := pulseApp(t, "", "PULSE_SLOW_JOBS_THRESHOLD=150\n")
	for range 3 {
		testapp.PushJob(t, q, `App\Jobs\A`)
	}
	testapp.PushJob(t, q, `App\Jobs\Slow`)
	out, code := runWorkCLI(t, "--app", app, "--route", `App\Jobs\A=noop`, "--route", `App\Jobs\Slow=exec:sleep 0.3`, "--stop-when-empty")
	if code != 0 || !strings.Contains(out, "recording Laravel Pulse's Queues and Slow Jobs entries") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	counts := map[string]string{}
	for _, a := range pulsetest.Aggregates(t, q.DB(), appconfig.EngineSQLite, "") {
		if a.Period == 60 {
			counts[a.Type+" "+a.Key+" "+a.Aggregate] = a.Value
		}
	}
	max, _ := strconv.Atoi(counts[`slow_job App\Jobs\Slow max`])
	if counts["processing database:default count"] != "4" || counts["processed database:default count"] != "4" ||
		counts[`slow_job App\Jobs\Slow count`] != "1" || max < 300 || len(counts) != 4 {
		t.Errorf("the hour's aggregates %v: want 4 processing and processed on database:default, one slow App\\Jobs\\Slow of 300 ms or more, nothing else", counts)
	}
	if e := pulsetest.Entries(t, q.DB(), appconfig.EngineSQLite, ""); len(e) != 1 || e[0].Key != `App\Jobs\Slow` {
		t.Errorf("pulse_entries %+v: want the slow job alone", e)
	}
}

// TestWorkPulseFlag: --pulse on stops at start when the app does not run
// Pulse, saying why; a Pulse setting Go cannot honour stops `work` with
// the setting and the way out (--pulse off, which then runs); a bad value
// is a usage error.
func TestWorkPulseFlag(t *testing.T) {
	phptest.NeedPHP(t)
	plain := phptest.CopyAppWithoutBridge(t)
	os.WriteFile(filepath.Join(plain, ".env"), []byte("DB_CONNECTION=sqlite\nDB_DATABASE="+filepath.Join(plain, "database", "app.sqlite")+"\nCACHE_DRIVER=file\n"), 0o644)
	out, code := runWorkCLI(t, "--app", plain, "--route", `App\Jobs\NoopJob=noop`, "--stop-when-empty", "--create-tables", "--pulse", "on")
	if code != 1 || !strings.Contains(out, "--pulse on: laravel/pulse is not installed in the app") {
		t.Errorf("--pulse on without Pulse: exit %d:\n%s", code, out)
	}
	app, q := pulseApp(t, `'/(?<=App)Jobs/'`, "")
	testapp.PushJob(t, q, `App\Jobs\A`)
	out, code = runWorkCLI(t, "--app", app, "--route", `App\Jobs\A=noop`, "--stop-when-empty")
	if code != 1 || !strings.Contains(out, "pulse.recorders.Queues.ignore[0]") || !strings.Contains(out, "--pulse off") {
		t.Errorf("a lookbehind in an ignore pattern: exit %d:\n%s", code, out)
	}
	if n := testapp.CountRows(t, q, "jobs where reserved_at is null"); n != 1 {
		t.Errorf("%d jobs left untouched, want 1: nothing is claimed before the setup is checked", n)
	}
	if out, code = runWorkCLI(t, "--app", app, "--route", `App\Jobs\A=noop`, "--stop-when-empty", "--pulse", "off"); code != 0 {
		t.Errorf("--pulse off: exit %d:\n%s", code, out)
	}
	if out, code = runWorkCLI(t, "--app", app, "--route", `App\Jobs\A=noop`, "--pulse", "maybe"); code != 2 || !strings.Contains(out, "--pulse \"maybe\"") {
		t.Errorf("--pulse maybe: exit %d:\n%s", code, out)
	}
}

// TestWorkStreamsToPulsesRedisIngest: with PULSE_INGEST_DRIVER=redis the
// entries go to Pulse's stream on the app's Redis connection, under the
// global prefix (database.redis.options.prefix) as Pulse's raw XADD
// writes it, for `php artisan pulse:work` to store.
func TestWorkStreamsToPulsesRedisIngest(t *testing.T) {
	prefix := "laraworker_test_" + strconv.FormatInt(time.Now().UnixNano(), 36) + "_"
	testdsn.NeedRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Skipf("no Redis: %v", err)
	}
	key := prefix + "laravel:pulse:ingest"
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	app, q := pulseApp(t, "", "PULSE_INGEST_DRIVER=redis\nREDIS_PREFIX="+prefix+"\n")
	testapp.PushJob(t, q, `App\Jobs\A`)
	out, code := runWorkCLI(t, "--app", app, "--route", `App\Jobs\A=noop`, "--stop-when-empty")
	if code != 0 || !strings.Contains(out, "stream "+key) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	msgs, err := rdb.XRange(context.Background(), key, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, m := range msgs {
		data, _ := m.Values["data"].(string)
		if !strings.HasPrefix(data, `O:19:"Laravel\Pulse\Entry":6:{`) {
			t.Errorf("stream entry %q: want a serialized Laravel\\Pulse\\Entry", data)
		}
		types = append(types, data[strings.Index(data, `s:4:"type";`):strings.Index(data, `s:3:"key";`)])
	}
	if want := []string{`s:4:"type";s:10:"processing";`, `s:4:"type";s:9:"processed";`}; strings.Join(types, " ") != strings.Join(want, " ") {
		t.Errorf("stream entries %v, want %v", types, want)
	}
	if n := testapp.CountRows(t, q, "pulse_aggregates"); n != 0 {
		t.Errorf("%d rows in pulse_aggregates: the redis ingest leaves the tables to pulse:work", n)
	}
}
