package reliability

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/worker"
)

// TestAttemptsOverflowFailsOnlyThatJob: on MariaDB in strict mode a row
// whose `attempts` (tinyint unsigned) is already 255 cannot be reserved
// (the update overflows). Like Laravel 12.54+, the worker must fail that
// job into failed_jobs and go on; every other job must run. It is checked
// with one-job claims (--concurrency 1, --laravel-exact) and with batch
// claims (--concurrency 10), where the overflowing row shares a claim with
// innocent rows.
func TestAttemptsOverflowFailsOnlyThatJob(t *testing.T) {
	for _, tc := range []struct {
		name        string
		concurrency int
		exact       bool
		// stopWhenEmpty: the worker must not take the failed claim for
		// an empty queue and stop with jobs left.
		stopWhenEmpty bool
	}{{"one-job claims", 1, true, false}, {"batch claims", 10, false, false}, {"one-job claims, stop when empty", 1, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testdb.Config(t, appconfig.EngineMySQL)
			q := testdb.Open(t, cfg)
			var uuids []string
			for i := range 11 {
				raw, _ := payload.BuildObjectPayload(phpserialize.Object(noopClass, phpserialize.Public("i", phpserialize.Int(int64(i)))), payload.BuildOptions{})
				p, _ := payload.Parse(raw)
				uuids = append(uuids, p.UUID)
				if _, err := q.Push(context.Background(), jobqueue.PushItem{Payload: raw}); err != nil {
					t.Fatal(err)
				}
			}
			// The 6th row has been attempted 255 times (e.g. by workers
			// that kept crashing on it).
			res, err := q.DB().Exec(fmt.Sprintf("update %s set attempts = 255 where payload like ?", cfg.JobsTable), `%i:5;}%`)
			if n, _ := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("setting attempts to 255: %v (%d rows)", err, n)
			}
			var mu sync.Mutex
			ran := map[string]int{}
			reg := handlers.NewRegistry()
			reg.HandleFunc(noopClass, func(_ context.Context, job *handlers.Job) error {
				mu.Lock()
				ran[job.UUID]++
				mu.Unlock()
				return nil
			})
			opts := worker.Config{Sleep: 10 * time.Millisecond, StopWhenEmpty: tc.stopWhenEmpty, MemoryMB: -1, Tries: -1,
				Concurrency: tc.concurrency, LaravelExact: tc.exact}
			w, err := worker.New(q, reg, opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if !tc.stopWhenEmpty {
				// A daemon: stop it once the table is empty (or time is up).
				go func() {
					for ctx.Err() == nil && count(t, q.DB(), "select count(*) from "+cfg.JobsTable) > 0 {
						time.Sleep(50 * time.Millisecond)
					}
					time.Sleep(100 * time.Millisecond)
					cancel()
				}()
			}
			start := time.Now()
			w.Run(ctx)
			if time.Since(start) > 19*time.Second {
				t.Error("the jobs table did not empty within 20 s: the overflowing row wedged the queue")
			}

			f := failedRows(t, q.DB(), cfg.FailedTable)
			var failedUUIDs []string
			for _, r := range f {
				failedUUIDs = append(failedUUIDs, r.UUID)
			}
			if len(f) != 1 || f[0].UUID != uuids[5] {
				t.Errorf("failed_jobs holds %v, want only the overflowing job %s; first exception: %.300s", failedUUIDs, uuids[5], firstException(f))
			} else if !strings.Contains(f[0].Exception, "Out of range") {
				t.Errorf("the failure does not name the overflow: %.300s", f[0].Exception)
			}
			for i, u := range uuids {
				if i != 5 && ran[u] != 1 {
					t.Errorf("job %d (%s) ran %d times, want 1", i, u, ran[u])
				}
			}
			if left := count(t, q.DB(), "select count(*) from "+cfg.JobsTable); left != 0 {
				t.Errorf("%d jobs left", left)
			}
		})
	}
}

func firstException(f []failed) string {
	if len(f) == 0 {
		return ""
	}
	return f[0].Exception
}
