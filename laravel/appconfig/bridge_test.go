package appconfig

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/phptest"
)

// TestBridgeConfigThroughPHP: with the bridge installed, the app's PHP
// says so, with the capabilities LaraworkerServiceProvider declares and
// the hooks queue resolved as the bridge resolves it (its connection's
// driver, database connection and table), beside the database connection
// the queue's tables are on.
func TestBridgeConfigThroughPHP(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyApp(t)
	phptest.WriteFile(t, filepath.Join(app, ".env"), "APP_KEY="+testAppKey+"\nDB_CONNECTION=mysql\nDB_HOST=db.internal\nDB_DATABASE=shop\nDB_PREFIX=shop_\nQUEUE_CONNECTION=database\n")
	load := func(environ ...string) AppInfo {
		t.Helper()
		_, info, err := Load(context.Background(), Options{EnvFile: filepath.Join(app, ".env"), Environ: append([]string{"PATH=" + os.Getenv("PATH")}, environ...)})
		if err != nil {
			t.Fatal(err)
		}
		if info.Bridge == nil {
			t.Fatalf("no bridge in %+v", info)
		}
		return info
	}
	info := load()
	b := info.Bridge
	if !b.Installed || !slices.Equal(b.Capabilities, []string{"failed", "batch-callbacks", "chain-catch", "unique", "models", "middleware", "record-all"}) || !b.RouteBatchesWithCallbacks || b.RecordVersion != 1 {
		t.Errorf("bridge %+v", b)
	}
	// The bridge records every job unless told otherwise.
	if b.Record != "all" || !b.RecordsAll() {
		t.Errorf("record %q (all: %v), want the default all", b.Record, b.RecordsAll())
	}
	if b := load("LARAWORKER_RECORD=routed").Bridge; b.Record != "routed" || b.RecordsAll() {
		t.Errorf("LARAWORKER_RECORD=routed: record %q (all: %v)", b.Record, b.RecordsAll())
	}
	want := BridgeHooksQueue{Connection: "database", Queue: "default", Defined: true, Driver: "database", DBConnection: "mysql", Table: "shop_jobs"}
	if b.HooksQueue != want || info.DBConnection != "mysql" {
		t.Errorf("hooks queue %+v on %q, want %+v on mysql", b.HooksQueue, info.DBConnection, want)
	}
	b = load("LARAWORKER_HOOKS_CONNECTION=redis", "LARAWORKER_HOOKS_QUEUE=php-hooks", "LARAWORKER_ROUTE_BATCHES_WITH_CALLBACKS=false").Bridge
	if h := b.HooksQueue; h.Connection != "redis" || h.Queue != "php-hooks" || h.Driver != "redis" || b.RouteBatchesWithCallbacks {
		t.Errorf("hooks queue on redis: %+v", b)
	}
	if b := load("LARAWORKER_HOOKS_CONNECTION=nope").Bridge; b.HooksQueue.Defined {
		t.Errorf("an undefined connection: %+v", b.HooksQueue)
	}
}
