package appconfig

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/phptest"
)

// TestQueueForwardsThroughPHP: the forwards the app registered while
// booting (Queue::forward, Laravel 13.26+, kept in memory by the
// container's queue.routes) are read through its PHP, and
// QueueForwardsFor applies them to a connection as
// QueueRoutes::forwardedQueue does: a forward with no connection applies
// to every connection, one naming a connection only to it. An app
// without forwards has none.
func TestQueueForwardsThroughPHP(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyApp(t)
	phptest.WriteFile(t, filepath.Join(app, ".env"), "APP_KEY="+testAppKey+"\nDB_CONNECTION=sqlite\nQUEUE_CONNECTION=database\n")
	load := func(environ ...string) AppInfo {
		t.Helper()
		_, info, err := Load(context.Background(), Options{EnvFile: filepath.Join(app, ".env"), Environ: append([]string{"PATH=" + os.Getenv("PATH")}, environ...)})
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	if info := load(); info.Source != "php" || len(info.QueueForwards) != 0 || info.QueueForwardsFor("database") != nil {
		t.Fatalf("an app without forwards: %s, %+v", info.Source, info.QueueForwards)
	}
	info := load("TEST_QUEUE_FORWARDS=fwdsrc=fwddst,onredis=elsewhere@redis,same=same")
	want := []QueueForward{{From: "fwdsrc", To: "fwddst"}, {From: "onredis", Connection: "redis", To: "elsewhere"}, {From: "same", To: "same"}}
	if !slices.Equal(info.QueueForwards, want) {
		t.Fatalf("forwards %+v, want %+v", info.QueueForwards, want)
	}
	if got := info.QueueForwardsFor("database"); !maps.Equal(got, map[string]string{"fwdsrc": "fwddst"}) {
		t.Errorf("database: %v", got)
	}
	if got := info.QueueForwardsFor("redis"); !maps.Equal(got, map[string]string{"fwdsrc": "fwddst", "onredis": "elsewhere"}) {
		t.Errorf("redis: %v", got)
	}
}
