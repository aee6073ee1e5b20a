package worker

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// TestAJobAsLargeAsTheMemoryLimitFailsUndecoded: a job whose payload is
// at least --memory (here 3 MB against 2) goes to failed_jobs under its
// own uuid, never decoded nor run, with a message that gives its size,
// the limit and the fix; the jobs claimed with it run, and the worker
// stops past its limit (exit 12) with nothing left to loop on.
func TestAJobAsLargeAsTheMemoryLimitFailsUndecoded(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		var ran atomic.Int64
		reg := handlers.NewRegistry()
		reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { ran.Add(1); return nil })
		small := push(t, q, "", classA)
		big := push(t, q, "", classA, phpserialize.Public("blob", phpserialize.String(strings.Repeat("x", 3<<20))))
		push(t, q, "", classA)
		opts := testConfig()
		opts.MemoryMB = 2
		opts.Concurrency = 8
		w, logs := newTestWorker(t, q, reg, opts, nil)
		if reason := runWorker(t, w, 30*time.Second); reason != StopMemory {
			t.Fatalf("stopped for %s", reason)
		}
		if n := ran.Load(); n != 2 {
			t.Fatalf("the handler ran %d times, want the two small jobs only", n)
		}
		if rows := jobRows(t, q); len(rows) != 0 {
			t.Fatalf("left on the queue: %d", len(rows))
		}
		f := failedRows(t, q)
		if len(f) != 1 || f[0].UUID != big || f[0].UUID == small {
			t.Fatalf("failed rows %+v, want the big job under its uuid", f)
		}
		mustContain(t, "the failure", f[0].Exception, `LaraWorker\PayloadTooLargeException`, "3.0 MB", "--memory 2 MB", "queue:retry "+big)
		mustContain(t, "the log", logs.String(), "at least the worker's --memory limit")
	})
}
