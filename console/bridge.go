package console

import (
	"fmt"
	"slices"

	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
)

// workBridge is the app's bridge as the worker uses it: what it does, and
// where its hook jobs go. No bridge (or an app read without its PHP, which
// cannot tell): nil, nil. A bridge whose payload record this laraworker
// cannot read is an error (each job it routes would fail), and so is a
// hooks queue Go cannot write in the
// transactions of its outcomes (another driver, another database) is an
// error: the hooks would not be atomic with the outcomes they follow.
func workBridge(info appconfig.AppInfo) (*bridgeproto.Bridge, *queueconn.HooksQueue, error) {
	b := info.Bridge
	if b == nil || !b.Installed {
		return nil, nil, nil
	}
	if v := b.RecordVersion; v != 0 && v != bridgeproto.MetadataVersion {
		return nil, nil, fmt.Errorf("the installed bridge records version %d of its payload key (\"laraworker\"), and this laraworker reads version %d: "+
			"it would fail every job the bridge routes to it. Install the laraworker and bridge of one release", v, bridgeproto.MetadataVersion)
	}
	wb := &bridgeproto.Bridge{Capabilities: slices.Clone(b.Capabilities)}
	if !bridgeproto.HasCapability(b.Capabilities, bridgeproto.CapFailed) && !bridgeproto.HasCapability(b.Capabilities, bridgeproto.CapBatchCallbacks) {
		return wb, nil, nil
	}
	h := b.HooksQueue
	where := fmt.Sprintf("the bridge's hooks_queue (config/laraworker.php, LARAWORKER_HOOKS_CONNECTION) is queue connection %q", h.Connection)
	switch {
	case h.Connection == "" || !h.Defined:
		return nil, nil, fmt.Errorf("%s, which config/queue.php does not define", where)
	case h.Driver != queueconn.DriverDatabase:
		return nil, nil, fmt.Errorf("%s, whose driver is %q: laraworker pushes the hook jobs in the transaction of its own write, so it must be a database connection", where, h.Driver)
	case h.Queue == "":
		return nil, nil, fmt.Errorf("%s, which has no queue name (set hooks_queue.queue, LARAWORKER_HOOKS_QUEUE, or the connection's queue)", where)
	case info.DBConnection == "":
		return nil, nil, fmt.Errorf("%s, but the database this worker writes its outcomes to is not known: cannot tell whether the hook jobs can be written in the same transaction", where)
	case h.DBConnection != info.DBConnection:
		return nil, nil, fmt.Errorf("%s, on database connection %q, but this worker writes its outcomes (jobs, failed_jobs, job_batches) to database connection %q: the hook jobs would not be written in the same transaction, and a crash could lose or double them. Point hooks_queue at a database queue connection on %q", where, h.DBConnection, info.DBConnection, info.DBConnection)
	}
	return wb, &queueconn.HooksQueue{Connection: h.Connection, Table: h.Table, Queue: h.Queue}, nil
}

// hooksQueueWarning: a worker that watches the hooks queue leaves the hook
// jobs there alone (they are PHP's), and says so.
func hooksQueueWarning(h *queueconn.HooksQueue, connection string, queues []string) string {
	if h == nil || h.Connection != connection || !slices.Contains(queues, h.Queue) {
		return ""
	}
	return fmt.Sprintf("this worker watches queue %q, where the bridge's hook jobs go (hooks_queue): Go never runs them; a `php artisan queue:work --queue=%s` must serve it", h.Queue, h.Queue)
}
