package console

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/rs/zerolog"
)

// TestOpenConnectionByDriver: the served queue connection's driver picks
// the store. A database connection (or an unknown driver, as before) gets
// the database store with every capability the CLI uses; a redis one is
// refused by name until a Redis store exists, instead of serving the jobs
// table PHP does not push to.
func TestOpenConnectionByDriver(t *testing.T) {
	cfg := appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(t.TempDir(), "q.sqlite")}.WithDefaults()
	ctx := context.Background()
	for _, info := range []appconfig.AppInfo{{}, {Connection: "database", QueueDriver: "database"}, {Connection: "jobs", QueueConnections: map[string]string{"jobs": "database"}}} {
		conn, err := openConnection(ctx, cfg, info, connectionOptions{})
		if err != nil {
			t.Fatalf("%+v: %v", info, err)
		}
		if conn.driver != driverDatabase || conn.admin == nil || conn.failed == nil || conn.schema == nil || conn.classes == nil || conn.sql == nil {
			t.Errorf("%+v: driver %s, capabilities %+v", info, conn.driver, conn)
		}
		if err := conn.ping(ctx); err != nil {
			t.Errorf("ping: %v", err)
		}
		conn.Close()
	}
	info := appconfig.AppInfo{Connection: "redis", ConnectionFrom: "queue.default",
		QueueConnections: map[string]string{"redis": "redis", "database": "database"}}
	_, err := openConnection(ctx, cfg, info, connectionOptions{})
	if err == nil || !strings.Contains(err.Error(), `queue connection "redis" (queue.default) has driver redis`) ||
		!strings.Contains(err.Error(), "not serve Redis queues yet") || !strings.Contains(err.Error(), "--connection database") {
		t.Fatalf("redis connection: %v", err)
	}
}

// TestExactModeIsOneValue: --laravel-exact is set once, on the connection;
// the store's statements, the worker's config and the claim reported at
// start all follow it.
func TestExactModeIsOneValue(t *testing.T) {
	cfg := appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(t.TempDir(), "q.sqlite")}.WithDefaults()
	ctx := context.Background()
	for _, exact := range []bool{false, true} {
		conn, err := openConnection(ctx, cfg, appconfig.AppInfo{}, connectionOptions{exact: exact})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.createTables(ctx); err != nil {
			t.Fatal(err)
		}
		wcfg := workerConfig(workFlags{exact: !exact}, conn, workerDeps{})
		_, claim := conn.claim(ctx, zerolog.Nop())
		if wcfg.LaravelExact != exact || (claim == "laravel-exact") != exact {
			t.Errorf("exact %v: worker LaravelExact %v, claim %q", exact, wcfg.LaravelExact, claim)
		}
	}
}

// TestCommandsRefuseARedisConnection: every command that opens the queue
// names the redis connection it cannot serve yet, and exits 1.
func TestCommandsRefuseARedisConnection(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"artisan": "<?php\n",
		".env":    "DB_CONNECTION=sqlite\nDB_DATABASE=" + filepath.Join(dir, "db.sqlite") + "\nQUEUE_CONNECTION=redis\n",
		"config/queue.php": `<?php
return ['default' => env('QUEUE_CONNECTION', 'database'), 'connections' => [
    'redis' => ['driver' => 'redis', 'queue' => 'default'],
    'database' => ['driver' => 'database', 'table' => 'jobs'],
]];
`,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"size"}, {"failed"}, {"tables"}, {"work", "--route", `App\Jobs\A=noop`, "--stop-when-empty", "--log-format", "json"}} {
		var out, errOut bytes.Buffer
		app := testApp()
		app.Writer, app.ErrWriter = &out, &errOut
		code := Run(app, append(append([]string{"laraworker"}, args...), "--app", dir, "--php", "off"))
		if code != 1 || !strings.Contains(errOut.String(), `has driver redis: laraworker does not serve Redis queues yet; serve one with --connection database`) {
			t.Errorf("%v: exit %d, stderr %s", args, code, errOut.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "db.sqlite")); err == nil {
		t.Error("a command created the database of a connection it does not serve")
	}
}
