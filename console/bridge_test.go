package console

import (
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// TestWorkBridge: the worker pushes hook jobs only for an installed bridge
// that runs them, onto a hooks queue it can write in its outcomes'
// transactions; any other hooks queue stops `work` with the reason.
func TestWorkBridge(t *testing.T) {
	all := []string{"failed", "batch-callbacks", "chain-catch", "unique", "models", "middleware"}
	good := appconfig.BridgeHooksQueue{Connection: "database", Queue: "hooks", Defined: true, Driver: "database", DBConnection: "mysql", Table: "jobs"}
	info := func(installed bool, caps []string, h appconfig.BridgeHooksQueue) appconfig.AppInfo {
		return appconfig.AppInfo{DBConnection: "mysql", Bridge: &appconfig.BridgeConfig{Installed: installed, Capabilities: caps, HooksQueue: h}}
	}
	if b, h, err := workBridge(appconfig.AppInfo{}); b != nil || h != nil || err != nil {
		t.Errorf("no bridge: %v %v %v", b, h, err)
	}
	if b, h, err := workBridge(info(false, all, good)); b != nil || h != nil || err != nil {
		t.Errorf("a config without the package: %v %v %v", b, h, err)
	}
	if b, h, err := workBridge(info(true, nil, appconfig.BridgeHooksQueue{})); b == nil || h != nil || err != nil {
		t.Errorf("a bridge without hooks: %v %v %v", b, h, err)
	}
	b, h, err := workBridge(info(true, all, good))
	if err != nil || len(b.Capabilities) != 6 || *h != (queueconn.HooksQueue{Connection: "database", Table: "jobs", Queue: "hooks"}) {
		t.Errorf("a bridge with hooks: %v %+v %v", b, h, err)
	}
	for _, c := range []struct {
		name string
		edit func(*appconfig.BridgeHooksQueue)
		want string
	}{
		{"undefined", func(h *appconfig.BridgeHooksQueue) { h.Defined = false }, "which config/queue.php does not define"},
		{"redis", func(h *appconfig.BridgeHooksQueue) { h.Driver = "redis" }, `whose driver is "redis"`},
		{"no queue", func(h *appconfig.BridgeHooksQueue) { h.Queue = "" }, "no queue name"},
		{"another database", func(h *appconfig.BridgeHooksQueue) { h.DBConnection = "reports" }, `on database connection "reports", but this worker writes its outcomes (jobs, failed_jobs, job_batches) to database connection "mysql"`},
	} {
		bad := good
		c.edit(&bad)
		if _, _, err := workBridge(info(true, all, bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	newer := info(true, all, good)
	newer.Bridge.RecordVersion = 2
	if _, _, err := workBridge(newer); err == nil || !strings.Contains(err.Error(), "records version 2 of its payload key") {
		t.Errorf("a bridge newer than this laraworker: %v", err)
	}
	same := info(true, all, good)
	same.Bridge.RecordVersion = 1
	if _, _, err := workBridge(same); err != nil {
		t.Errorf("the bridge of this laraworker: %v", err)
	}
	if w := hooksQueueWarning(&queueconn.HooksQueue{Connection: "database", Queue: "hooks"}, "database", []string{"go", "hooks"}); !strings.Contains(w, "Go never runs them") {
		t.Errorf("watching the hooks queue: %q", w)
	}
}
