package console

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/rs/zerolog"
)

// TestExactModeIsOneValue: --laravel-exact is set once, on the connection;
// the store's statements, the worker's config and the claim reported at
// start all follow it.
func TestExactModeIsOneValue(t *testing.T) {
	cfg := appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(t.TempDir(), "q.sqlite")}.WithDefaults()
	ctx := context.Background()
	for _, exact := range []bool{false, true} {
		conn, err := queueconn.Open(ctx, cfg, appconfig.AppInfo{}, queueconn.Options{Exact: exact})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.CreateTables(ctx); err != nil {
			t.Fatal(err)
		}
		wcfg := workerConfig(workFlags{exact: !exact}, conn, workerDeps{})
		_, claim := conn.Claim(ctx, zerolog.Nop())
		if wcfg.LaravelExact != exact || (claim == "laravel-exact") != exact {
			t.Errorf("exact %v: worker LaravelExact %v, claim %q", exact, wcfg.LaravelExact, claim)
		}
	}
}

// TestCommandsServeARedisConnection: with QUEUE_CONNECTION=redis the
// commands open the app's Redis queue (read here from the config files,
// without PHP): push puts a job on Redis as dispatch() would, size counts
// it, work runs it, failed reads failed_jobs in the app's database; and a
// redis connection whose config Go cannot read is refused by name.
func TestCommandsServeARedisConnection(t *testing.T) {
	srv := testredis.Start(t)
	host, port, _ := net.SplitHostPort(srv.Addr)
	dir := t.TempDir()
	files := map[string]string{
		"artisan": "<?php\n",
		".env":    "DB_CONNECTION=sqlite\nDB_DATABASE=" + filepath.Join(dir, "db.sqlite") + "\nQUEUE_CONNECTION=redis\nREDIS_HOST=" + host + "\nREDIS_PORT=" + port + "\n",
		"config/queue.php": `<?php
return ['default' => env('QUEUE_CONNECTION', 'database'), 'connections' => [
    'redis' => ['driver' => 'redis', 'connection' => 'default', 'queue' => 'default', 'retry_after' => 90, 'block_for' => null],
    'database' => ['driver' => 'database', 'table' => 'jobs'],
]];
`,
		"composer.lock": `{"packages":[{"name":"laravel/framework","version":"v8.83.27"}]}`,
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		app := testApp()
		app.Writer, app.ErrWriter = &out, &errOut
		code := Run(app, append(append([]string{"laraworker"}, args...), "--app", dir, "--php", "off"))
		return out.String(), errOut.String(), code
	}
	// config/database.php is missing: the Redis connections are unknown.
	if _, errOut, code := run("size"); code != 1 || !strings.Contains(errOut, `has driver redis, but its configuration was not read`) {
		t.Fatalf("size without config/database.php: exit %d, %s", code, errOut)
	}
	os.WriteFile(filepath.Join(dir, "config", "database.php"), []byte(`<?php
return ['default' => 'sqlite', 'connections' => ['sqlite' => ['driver' => 'sqlite', 'database' => env('DB_DATABASE')]],
    'redis' => ['client' => 'phpredis', 'options' => ['prefix' => 'app_database_'],
        'default' => ['host' => env('REDIS_HOST'), 'port' => env('REDIS_PORT'), 'database' => '0']]];
`), 0o644)
	if out, errOut, code := run("tables"); code != 0 {
		t.Fatalf("tables: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := run("push", `App\Jobs\A`); code != 0 || !strings.Contains(out, "Pushed job [") {
		t.Fatalf("push: exit %d\n%s\n%s", code, out, errOut)
	}
	ctx := context.Background()
	listed, err := srv.Client(t).LRange(ctx, "app_database_queues:default", 0, -1).Result()
	if err != nil || len(listed) != 1 || !strings.Contains(listed[0], `"attempts":0`) {
		t.Fatalf("the pushed job in Redis: %q %v", listed, err)
	}
	if out, errOut, code := run("size"); code != 0 || !strings.Contains(out, "default") {
		t.Fatalf("size: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code := run("work", "--route", `App\Jobs\A=noop`, "--stop-when-empty", "--log-format", "json", "--heartbeat=false")
	if code != 0 || !strings.Contains(errOut+out, `"done":1`) {
		t.Fatalf("work: exit %d\n%s\n%s", code, out, errOut)
	}
	if n, _ := srv.Client(t).Exists(ctx, "app_database_queues:default", "app_database_queues:default:reserved").Result(); n != 0 {
		t.Fatal("the job is still in Redis")
	}
	if out, errOut, code := run("failed"); code != 0 {
		t.Fatalf("failed: exit %d\n%s\n%s", code, out, errOut)
	}
	// push --json names a Redis job by its payload's "id", a string, as
	// the job in the list has it.
	out, errOut, code = run("push", `App\Jobs\A`, "--json")
	var pushed struct {
		ID any `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &pushed); code != 0 || err != nil {
		t.Fatalf("push --json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	id, _ := pushed.ID.(string)
	listed, err = srv.Client(t).LRange(ctx, "app_database_queues:default", 0, -1).Result()
	if id == "" || err != nil || len(listed) != 1 || !strings.Contains(listed[0], `"id":"`+id+`"`) {
		t.Fatalf("push --json printed id %#v; the job in Redis: %q %v", pushed.ID, listed, err)
	}
	// A Redis job has no number: inspect --id says the connection cannot.
	if out, errOut, code := run("inspect", "--id", "1"); code != 1 || !strings.Contains(errOut, `queue connection "redis" (driver redis) has no lookup of single jobs`) {
		t.Fatalf("inspect --id on redis: exit %d\n%s\n%s", code, out, errOut)
	}
}
