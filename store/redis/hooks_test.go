package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
)

const hooksQueue = "hooks"

// newHooksEnv is an env whose database side has a hooks queue on its jobs
// table (the app's database queue connection "database").
func newHooksEnv(t *testing.T, engine string) *env {
	t.Helper()
	cfg := testdb.Config(t, engine)
	cfg.ConnectionName = "redis"
	testdb.Open(t, cfg) // creates the tables, drops them after the test
	db, err := database.Open(context.Background(), cfg, database.Options{HooksQueue: &database.HooksQueue{Connection: "database", Queue: hooksQueue}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return newEnvOn(t, db, envOptions{})
}

// hookRow is a job on the hooks queue: what the store wrote for PHP.
type hookRow struct {
	testdb.JobRow
	text string // the hook payload's marker: "failure:<callbacks>" or "batch:<callbacks>"
}

func (e *env) hooks(t *testing.T) []hookRow {
	t.Helper()
	var out []hookRow
	for _, r := range testdb.JobRows(t, e.db) {
		if r.Queue != hooksQueue {
			continue
		}
		p, err := payload.Parse([]byte(r.Payload))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, hookRow{JobRow: r, text: p.DisplayName})
	}
	return out
}

// testHooks builds marker payloads a test can read back: a failure's
// hook names the callbacks it runs first, a batch job the ones it runs.
func testHooks(decide []string) *jobqueue.Hooks {
	mark := func(kind string, which []string) ([]byte, error) {
		return fmt.Appendf(nil, `{"uuid":"%s-%d","displayName":"%s:%s"}`, kind, time.Now().UnixNano(), kind, strings.Join(which, ",")), nil
	}
	return &jobqueue.Hooks{
		BatchCallbacks: func(jobqueue.BatchUpdate) ([]string, error) { return decide, nil },
		Failure:        func(which []string) ([]byte, error) { return mark("failure", which) },
		Batch:          func(_ string, which []string) ([]byte, error) { return mark("batch", which) },
	}
}

// TestFailParksItsHookUntilTheJobIsGone: a failure's hook job is written
// with its failed_jobs row, parked until retry_after (a worker killed
// before the job leaves Redis leaves it to run then: a failed row always
// has its hooks), and made available, with the batch callbacks the batch
// update decided, in that update's transaction.
func TestFailParksItsHookUntilTheJobIsGone(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newHooksEnv(t, engine)
		e.insertBatch(t, fixtureBatchID, 3, []byte("a:0:{}"))
		uuid := e.push(t, "mail", classA)
		row := e.claim(t, "mail", 1)[0]
		e.s.testAfterFailedRow = func() {
			h := e.hooks(t)
			if len(h) != 1 || h[0].text != "failure:" || h[0].AvailableAt < time.Now().Unix()+80 {
				t.Errorf("before the job left Redis: hook jobs %+v, want one parked for retry_after", h)
			}
		}
		entry := &jobqueue.BatchEntry{ID: fixtureBatchID, JobUUID: uuid, AllowFailures: true}
		if err := e.s.Fail(e.ctx, row, uuid, "boom", jobqueue.Followup{Batch: entry, Hooks: testHooks([]string{"catch"})}); err != nil {
			t.Fatal(err)
		}
		h := e.hooks(t)
		if len(h) != 1 || h[0].text != "failure:catch" || h[0].AvailableAt > time.Now().Unix() {
			t.Fatalf("hook jobs %+v, want one available now naming the batch's catch", h)
		}
		if b := e.batch(t, fixtureBatchID); b.FailedJobs != 1 {
			t.Fatalf("batch %+v", b)
		}
	})
}

// TestFailWithALostReservationTakesItsHookBack: the delete finds the job
// gone after the failed row was written: the row and its parked hook job
// are deleted together, nothing runs in PHP.
func TestFailWithALostReservationTakesItsHookBack(t *testing.T) {
	e := newHooksEnv(t, appconfig.EngineSQLite)
	uuid := e.push(t, "", classA)
	row := e.claim(t, "", 1)[0]
	e.s.testAfterFailedRow = func() {
		if _, err := e.q.Clear(e.ctx, ""); err != nil {
			t.Error(err)
		}
	}
	if err := e.s.Fail(e.ctx, row, uuid, "boom", jobqueue.Followup{Hooks: testHooks(nil)}); !errors.Is(err, jobqueue.ErrReservationLost) {
		t.Fatalf("fail: %v", err)
	}
	if n, h := len(e.failed(t)), e.hooks(t); n != 0 || len(h) != 0 {
		t.Fatalf("%d failed rows, hook jobs %+v left: want none", n, h)
	}
}

// TestAHookTakenBeforeItsBatchUpdateGetsItsCallbacksApart: when a worker
// took the parked hook job already (the failure took longer than
// retry_after), the batch callbacks go in a job of their own, and failed()
// is not pushed twice.
func TestAHookTakenBeforeItsBatchUpdateGetsItsCallbacksApart(t *testing.T) {
	e := newHooksEnv(t, appconfig.EngineSQLite)
	e.insertBatch(t, fixtureBatchID, 3, []byte("a:0:{}"))
	uuid := e.push(t, "", classA)
	row := e.claim(t, "", 1)[0]
	e.s.testAfterFailedRow = func() {
		if _, err := e.db.DB().Exec("update "+e.db.Config().JobsTable+" set attempts = 1, reserved_at = ? where queue = ?", time.Now().Unix(), hooksQueue); err != nil {
			t.Error(err)
		}
	}
	entry := &jobqueue.BatchEntry{ID: fixtureBatchID, JobUUID: uuid}
	if err := e.s.Fail(e.ctx, row, uuid, "boom", jobqueue.Followup{Batch: entry, Hooks: testHooks([]string{"catch"})}); err != nil {
		t.Fatal(err)
	}
	h := e.hooks(t)
	if len(h) != 2 || h[0].text != "failure:" || !h[0].ReservedAt.Valid || h[1].text != "batch:catch" {
		t.Fatalf("hook jobs %+v: want the taken one as it was and the batch's catch apart", h)
	}
}

// TestFinishPushesBatchCallbacksWithItsUpdate: a success's batch
// callbacks job is written in the transaction of its batch update; one
// that triggers nothing writes none.
func TestFinishPushesBatchCallbacksWithItsUpdate(t *testing.T) {
	e := newHooksEnv(t, appconfig.EngineSQLite)
	e.insertBatch(t, fixtureBatchID, 2, []byte("a:0:{}"))
	for i, decide := range [][]string{nil, {"then", "finally"}} {
		uuid := e.push(t, "", classA)
		row := e.claim(t, "", 1)[0]
		hooks := testHooks(decide)
		hooks.Failure = nil
		if err := e.s.Finish(e.ctx, row, jobqueue.Followup{Batch: &jobqueue.BatchEntry{ID: fixtureBatchID, JobUUID: uuid}, Hooks: hooks}); err != nil {
			t.Fatal(err)
		}
		if n := len(e.hooks(t)); n != i {
			t.Fatalf("after success %d: %d hook jobs", i+1, n)
		}
	}
	if h := e.hooks(t); h[0].text != "batch:then,finally" {
		t.Fatalf("hook jobs %+v", h)
	}
}

// TestAFailedRowWhoseAnswerWasLostFindsItsHook: a retried Fail whose
// failed row (and parked hook) committed unseen finds the hook job by its
// uuid and unparks it, instead of leaving it parked or writing another.
func TestAFailedRowWhoseAnswerWasLostFindsItsHook(t *testing.T) {
	e := newHooksEnv(t, appconfig.EngineSQLite)
	uuid := e.push(t, "", classA)
	row := e.claim(t, "", 1)[0]
	hooks := testHooks(nil)
	raw, _ := hooks.Failure(nil)
	stored, _, err := e.db.RecordFailedWithHook(e.ctx, "default", row.Payload, uuid, "boom", raw, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	hook, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	w := e.s.begin(row)
	w.fw.UUID, w.fw.Hook, w.fw.HookUUID = stored, raw, hook.UUID
	if err := e.s.Fail(e.ctx, row, uuid, "boom", jobqueue.Followup{Hooks: hooks}); err != nil {
		t.Fatal(err)
	}
	h := e.hooks(t)
	if n := len(e.failed(t)); n != 1 || len(h) != 1 || h[0].AvailableAt > time.Now().Unix() {
		t.Fatalf("%d failed rows, hook jobs %+v: want one of each, available now", n, h)
	}
}

// TestHooksNeedAHooksQueue: a store whose database side has no hooks
// queue refuses hooks before writing anything.
func TestHooksNeedAHooksQueue(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	uuid := e.push(t, "", classA)
	row := e.claim(t, "", 1)[0]
	if err := e.s.Fail(e.ctx, row, uuid, "boom", jobqueue.Followup{Hooks: testHooks(nil)}); err == nil || !strings.Contains(err.Error(), "hooks queue") {
		t.Fatalf("fail with hooks: %v", err)
	}
	if n := len(e.failed(t)); n != 0 || len(e.reserved(t, "default")) != 1 {
		t.Fatalf("%d failed rows; the job must stay reserved", n)
	}
}
