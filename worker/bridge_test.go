package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// allCapabilities is a bridge that runs every hook.
var allCapabilities = &bridgeproto.Bridge{Capabilities: []string{bridgeproto.CapFailed, bridgeproto.CapBatchCallbacks, bridgeproto.CapChainCatch, bridgeproto.CapUnique, bridgeproto.CapModels, bridgeproto.CapMiddleware}}

// hooksQueueName is the queue the tests' hook jobs go to.
const hooksQueueName = "hooks"

// withHooksQueue opens q's tables again with a hooks queue on its own jobs
// table, as `work` opens the app's database with the bridge installed.
func withHooksQueue(t *testing.T, q *database.Queue) *database.Queue {
	t.Helper()
	hq, err := database.Open(context.Background(), q.Config(), database.Options{HooksQueue: &database.HooksQueue{Connection: "database", Queue: hooksQueueName}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hq.Close() })
	return hq
}

// bridgeConfig is testConfig with the bridge and the app's version.
func bridgeConfig() Config {
	cfg := testConfig()
	cfg.Bridge = allCapabilities
	cfg.LaravelVersion = "8.83"
	return cfg
}

// hookJob is a hook job as a PHP worker will unserialize it.
type hookJob struct {
	row   jobRow
	class string
	cmd   *payload.Command
}

func (h hookJob) str(t *testing.T, prop string) string {
	t.Helper()
	v, err := h.cmd.Object.Prop(prop)
	if err != nil {
		t.Fatal(err)
	}
	if v = v.Deref(); v.Kind == phpserialize.KindNull {
		return "<null>"
	}
	if v.Kind == phpserialize.KindInt {
		return strconv.FormatInt(v.Int, 10)
	}
	return string(v.Str)
}

func (h hookJob) list(t *testing.T, prop string) string {
	t.Helper()
	v, err := h.cmd.Object.Prop(prop)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range v.Deref().Entries {
		out = append(out, string(e.Value.Deref().Str))
	}
	return strings.Join(out, ",")
}

// hookJobs are the rows on the hooks queue, in order.
func hookJobs(t *testing.T, q *database.Queue) []hookJob {
	t.Helper()
	var out []hookJob
	for _, r := range jobRows(t, q) {
		if r.Queue != hooksQueueName {
			continue
		}
		p, err := payload.Parse([]byte(r.Payload))
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := payload.DecodeCommand(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Attempts != 0 || r.ReservedAt.Valid || p.MaxTries == nil || *p.MaxTries != 1 {
			t.Errorf("hook job %d: attempts %d, reserved %v, maxTries %v: want a fresh job tried once", r.ID, r.Attempts, r.ReservedAt, p.MaxTries)
		}
		out = append(out, hookJob{row: r, class: p.DisplayName, cmd: cmd})
	}
	return out
}

// TestFailureHooksPushedWithTheFailure: a job Go fails leaves, beside its
// failed_jobs row, one RunFailureHooks job on the hooks queue carrying the
// failed job's payload as it was, its queue, id and attempts and Go's
// exception, for PHP to run failed() and JobFailed; its failed_jobs text
// does not say the chain's catch callbacks were skipped (PHP runs them).
func TestFailureHooksPushedWithTheFailure(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		hq := withHooksQueue(t, q)
		raw := fixture(t, "chain-catch.json")
		id := pushRaw(t, q, "chains", raw)
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\ChainLinkJob`, func(context.Context, *handlers.Job) error { return errors.New("link broke") })
		cfg := bridgeConfig()
		cfg.Queues = []string{"chains"}
		w, logs := newTestWorker(t, hq, reg, cfg, nil)
		runWorker(t, w, 30*time.Second)
		failed := failedRows(t, q)
		if len(failed) != 1 || strings.Contains(failed[0].Exception, "ChainStoppedException") {
			t.Fatalf("failed jobs %+v: want one, without the chain note (PHP runs the catch callbacks)", failed)
		}
		hooks := hookJobs(t, q)
		if len(hooks) != 1 || hooks[0].class != bridgeproto.RunFailureHooksClass {
			t.Fatalf("hook jobs %+v, want one RunFailureHooks\n%s", hooks, logs)
		}
		h := hooks[0]
		if got := h.str(t, "payload"); got != string(raw) {
			t.Errorf("the hook job carries payload %s, want the failed job's as it was", got)
		}
		for prop, want := range map[string]string{
			"connectionName": "database", "queueName": "chains", "jobId": strconv.FormatInt(id, 10), "attempts": "1",
			"exceptionClass": `LaraWorker\GoException`, "exceptionMessage": "link broke",
		} {
			if got := h.str(t, prop); got != want {
				t.Errorf("%s = %q, want %q", prop, got, want)
			}
		}
		if got := h.list(t, "batchCallbacks"); got != "" {
			t.Errorf("batchCallbacks %q for a job in no batch", got)
		}
		if len(jobRows(t, q)) != 1 {
			t.Errorf("jobs left %+v: want the hook job alone", jobRows(t, q))
		}
	})
}

// TestBatchMembersWithCallbacksRunInGo: with the bridge, the members of a
// batch with then/catch/finally callbacks (a real 8.83 batch,
// allowFailures) run in Go, and the hook jobs name exactly the callbacks
// Laravel's Batch runs, from the counters each update left: catch with the
// first failure (in its RunFailureHooks), finally when pending equals
// failed, then only when all succeeded; nothing for a success that
// finishes nothing.
func TestBatchMembersWithCallbacksRunInGo(t *testing.T) {
	members := []string{"batch-callbacks-member.json", "batch-callbacks-member-2.json", "batch-callbacks-member-3.json"}
	for _, c := range []struct {
		name     string
		outcomes string // per member, in order: s(ucceed), f(ail)
		want     []string
	}{
		{"all succeed", "sss", []string{"batch:then,finally"}},
		{"the second fails", "sfs", []string{"failure:catch", "batch:finally"}},
		{"the last fails", "ssf", []string{"failure:catch,finally"}},
		{"two fail", "ffs", []string{"failure:catch", "failure:", "batch:finally"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			testdb.ForEachEngine(t, func(t *testing.T, engine string) {
				q := testdb.Open(t, testdb.Config(t, engine))
				hq := withHooksQueue(t, q)
				p, _ := payload.Parse(fixture(t, members[0]))
				cmd, _ := payload.DecodeCommand(p, nil)
				batchID := *cmd.Queueable().BatchID
				insertBatch(t, q, batchID, 3, fixture(t, "batch-callbacks.options.txt"))
				fail := map[string]bool{}
				for i, m := range members {
					raw := fixture(t, m)
					mp, _ := payload.Parse(raw)
					fail[mp.UUID] = c.outcomes[i] == 'f'
					pushRaw(t, q, "batches", raw)
				}
				ran := 0
				reg := handlers.NewRegistry()
				reg.HandleFunc(p.DisplayName, func(_ context.Context, job *handlers.Job) error {
					ran++
					if fail[job.UUID] {
						return errors.New("member failed in Go")
					}
					return nil
				})
				cfg := bridgeConfig()
				cfg.Queues, cfg.Concurrency = []string{"batches"}, 1
				w, logs := newTestWorker(t, hq, reg, cfg, nil)
				runWorker(t, w, 30*time.Second)
				if ran != 3 {
					t.Fatalf("ran %d members in Go, want 3\n%s", ran, logs)
				}
				var got []string
				for _, h := range hookJobs(t, q) {
					switch h.class {
					case bridgeproto.RunFailureHooksClass:
						got = append(got, "failure:"+h.list(t, "batchCallbacks"))
					case bridgeproto.RunBatchCallbacksClass:
						got = append(got, "batch:"+h.list(t, "callbacks"))
						if h.str(t, "batchId") != batchID || h.str(t, "exceptionClass") != "<null>" {
							t.Errorf("RunBatchCallbacks for batch %s, exception %s", h.str(t, "batchId"), h.str(t, "exceptionClass"))
						}
					}
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("hook jobs %v, want %v\n%s", got, c.want, logs)
				}
			})
		})
	}
}

// TestNoBridgeSaysWhatDidNotRun: without the bridge, a job Go fails gets
// no hook job, and the worker says at start and on the job's line what
// did not run; a class holding models Go knows nothing of is named once.
func TestNoBridgeSaysWhatDidNotRun(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		push(t, q, "default", `App\Jobs\FailingJob`)
		models := fixture1267(t, "models.json")
		pushRaw(t, q, "default", models)
		pushRaw(t, q, "default", models)
		mp, _ := payload.Parse(models)
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\FailingJob`, func(context.Context, *handlers.Job) error { return errors.New("boom") })
		reg.HandleFunc(mp.DisplayName, okHandler)
		cfg := testConfig()
		cfg.LaravelVersion = "8.83"
		w, logs := newTestWorker(t, q, reg, cfg, nil)
		runWorker(t, w, 30*time.Second)
		if n := len(failedRows(t, q)); n != 1 || len(jobRows(t, q)) != 0 {
			t.Fatalf("failed %d, jobs %+v", n, jobRows(t, q))
		}
		if n := strings.Count(logs.String(), "this job holds models"); n != 1 {
			t.Errorf("the models warning said %d times for two jobs of the class, want once\n%s", n, logs)
		}
		mustContain(t, "log", logs.String(),
			"the laraworker bridge is not installed: when Go fails a job, the class's failed() method and JobFailed listeners do not run",
			`"not_run":"the class's failed() method and JobFailed listeners did not run (and a chain's catch callbacks): install the bridge, see README"`,
			`without the laraworker bridge, Go cannot tell from a Laravel 8-11.38 payload whether a class is ShouldBeUnique`)
		if n := strings.Count(logs.String(), "cannot tell from a Laravel 8-11.38 payload"); n != 1 {
			t.Errorf("the unique warning said %d times for two classes, want once, naming both\n%s", n, logs)
		}
	})
}

// TestBridgeNeedsAHooksQueue: a worker told the bridge runs hooks refuses
// to start on a store that cannot push them, or without the app's
// version, rather than drop them.
func TestBridgeNeedsAHooksQueue(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, "sqlite"))
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\X`, okHandler)
	if _, err := New(q, reg, bridgeConfig()); err == nil || !strings.Contains(err.Error(), "no hooks queue") {
		t.Errorf("no hooks queue: %v", err)
	}
	cfg := bridgeConfig()
	cfg.LaravelVersion = ""
	if _, err := New(withHooksQueue(t, q), reg, cfg); err == nil || !strings.Contains(err.Error(), "LaravelVersion") {
		t.Errorf("no version: %v", err)
	}
}

// TestHookJobsNeverClaimed: even with --unrouted=fail, a worker watching
// the hooks queue leaves the bridge's hook jobs to PHP.
func TestHookJobsNeverClaimed(t *testing.T) {
	q := withHooksQueue(t, testdb.Open(t, testdb.Config(t, "sqlite")))
	raw, err := bridgeproto.BatchCallbacksPayload(bridgeproto.BatchCallbacks{BatchID: "b", Which: []string{"then"}}, bridgeproto.Options{LaravelVersion: "8.83"})
	if err != nil {
		t.Fatal(err)
	}
	pushRaw(t, q, hooksQueueName, raw)
	cfg := bridgeConfig()
	cfg.Queues, cfg.Unrouted = []string{hooksQueueName}, UnroutedFail
	w, logs := newTestWorker(t, q, handlers.NewRegistry(), cfg, nil)
	runWorker(t, w, 30*time.Second)
	if rows := jobRows(t, q); len(rows) != 1 || rows[0].Attempts != 0 || len(failedRows(t, q)) != 0 {
		t.Fatalf("the hook job was touched: %+v, failed %+v\n%s", rows, failedRows(t, q), logs)
	}
}

// TestHooksFollowTheOutcomeAtomically: a failure whose reservation was
// lost (another worker reclaimed the job) writes no hook job, as it writes
// no failed row; the retried write of a failure pushes its hook once.
func TestHooksFollowTheOutcomeAtomically(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		hq := withHooksQueue(t, q)
		ctx := context.Background()
		push(t, q, "default", `App\Jobs\X`)
		rows, err := hq.Claim(ctx, []string{"default"}, 1, jobqueue.ClaimOptions{})
		if err != nil || len(rows) != 1 {
			t.Fatal(rows, err)
		}
		hooks := &jobqueue.Hooks{Failure: func([]string) ([]byte, error) {
			return bridgeproto.FailureHooksPayload(bridgeproto.Failure{Payload: rows[0].Payload, ExceptionClass: "E"}, bridgeproto.Options{LaravelVersion: "8.83"})
		}}
		stale := rows[0]
		other := *stale.ReservedAt - 1
		stale.ReservedAt = &other
		if err := hq.Fail(ctx, stale, "u-1", "E", jobqueue.Followup{Hooks: hooks}); !errors.Is(err, jobqueue.ErrReservationLost) {
			t.Fatalf("fail with a lost reservation: %v", err)
		}
		if n := len(hookJobs(t, q)); n != 0 {
			t.Fatalf("%d hook jobs for a failure that was not written", n)
		}
		if err := hq.Fail(ctx, rows[0], "u-1", "E", jobqueue.Followup{Hooks: hooks}); err != nil {
			t.Fatal(err)
		}
		if err := hq.Fail(ctx, rows[0], "u-1", "E", jobqueue.Followup{Hooks: hooks}); !errors.Is(err, jobqueue.ErrReservationLost) {
			t.Fatalf("the same failure written again: %v", err)
		}
		if n, f := len(hookJobs(t, q)), len(failedRows(t, q)); n != 1 || f != 1 {
			t.Fatalf("%d hook jobs, %d failed rows: want one each", n, f)
		}
		if err := q.Fail(ctx, rows[0], "u-2", "E", jobqueue.Followup{Hooks: hooks}); err == nil || !strings.Contains(err.Error(), "without a hooks queue") {
			t.Errorf("a queue without a hooks queue took hooks: %v", err)
		}
	})
}

// metadataPayload is an 8.83 payload of class with props, carrying the
// bridge's metadata m (as JSON), as the bridge records it at dispatch.
func metadataPayload(t *testing.T, class, m string, props ...phpserialize.Entry) []byte {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(class, props...), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return append(raw[:len(raw)-1], []byte(`,"laraworker":`+m+`}`)...)
}

// TestUniqueLockFromTheBridgesRecord: on an 8.83 payload (no lock in the
// payload itself) and no Go declaration, the lock the bridge recorded is
// released as CallQueuedHandler releases it: after a success or a failure,
// not after a release; an UntilProcessing one before the handler runs.
func TestUniqueLockFromTheBridgesRecord(t *testing.T) {
	const key = `laravel_unique_job:App\Jobs\UniqueJob7`
	record := func(untilProcessing bool) string {
		return fmt.Sprintf(`{"v":1,"laravel":"8.83.26","at":1,"class":"App\\Jobs\\UniqueJob","middleware":[],"not_carried":[],`+
			`"unique":{"until_processing":%t,"id":"7","key":"laravel_unique_job:App\\Jobs\\UniqueJob7","cache_key":"laravel_cachelaravel_unique_job:App\\Jobs\\UniqueJob7","store":"database","unique_for":600,"owner":null},`+
			`"delete_when_missing_models":false,"models":[],"failed":false,"stores":{},"errors":[]}`, untilProcessing)
	}
	for _, c := range []struct {
		name            string
		untilProcessing bool
		handler         func(q *database.Queue) handlers.HandlerFunc
		heldDuring      bool
		heldAfter       bool
	}{
		{"done", false, nil, true, false},
		{"failed", false, func(*database.Queue) handlers.HandlerFunc { return failHandler }, true, false},
		{"released", false, func(*database.Queue) handlers.HandlerFunc {
			return func(_ context.Context, j *handlers.Job) error { j.Release(time.Hour); return nil }
		}, true, true},
		{"until processing", true, nil, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			testdb.ForEachEngine(t, func(t *testing.T, engine string) {
				q := lockEnv(t, engine)
				testdb.HoldLock(t, q, key, "php-owner", time.Hour)
				pushRaw(t, q, "default", metadataPayload(t, `App\Jobs\UniqueJob`, record(c.untilProcessing), phpserialize.Public("productId", phpserialize.Int(7))))
				var heldDuring bool
				reg := handlers.NewRegistry()
				reg.HandleFunc(`App\Jobs\UniqueJob`, func(ctx context.Context, j *handlers.Job) error {
					heldDuring = lockHeld(t, q, key)
					if c.handler != nil {
						return c.handler(q)(ctx, j)
					}
					return nil
				})
				cfg := testConfig()
				cfg.LaravelVersion = "8.83"
				w, logs := newTestWorker(t, q, reg, cfg, nil)
				runWorker(t, w, 30*time.Second)
				if heldDuring != c.heldDuring || lockHeld(t, q, key) != c.heldAfter {
					t.Errorf("lock held during the run %v (want %v), after %v (want %v)\n%s", heldDuring, c.heldDuring, lockHeld(t, q, key), c.heldAfter, logs)
				}
			})
		})
	}
}

// TestModelsFromTheBridgesRecord: with no Go declaration, the models the
// bridge recorded are looked up before the run: a deleted one deletes the
// job without running it when the class deletes when models are missing,
// fails it with ModelNotFoundException otherwise; a collection is not
// checked; a model on another database connection is not looked up.
func TestModelsFromTheBridgesRecord(t *testing.T) {
	for _, c := range []struct {
		name              string
		deleteWhenMissing bool
		collection        bool
		connection        string
		wantRun, wantFail bool
	}{
		{"gone, deletes", true, false, "", false, false},
		{"gone, fails", false, false, "", false, true},
		{"gone from a collection", false, true, "", true, false},
		{"on another connection", false, false, "reports", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			testdb.ForEachEngine(t, func(t *testing.T, engine string) {
				q := testdb.Open(t, testdb.Config(t, engine))
				table := usersTable(t, q, 2)
				conn := "app"
				if c.connection != "" {
					conn = c.connection
				}
				m := fmt.Sprintf(`{"v":1,"laravel":"8.83.26","at":1,"class":"App\\Jobs\\ModelJob","middleware":[],"not_carried":[],"unique":null,`+
					`"delete_when_missing_models":%t,"models":[{"property":"user","class":"App\\Models\\User","collection":%t,"connection":%q,"table":%q,"key":"id","ids":[1]}],`+
					`"failed":false,"stores":{},"errors":[]}`, c.deleteWhenMissing, c.collection, conn, table)
				pushRaw(t, q, "default", metadataPayload(t, `App\Jobs\ModelJob`, m))
				ran := false
				reg := handlers.NewRegistry()
				reg.HandleFunc(`App\Jobs\ModelJob`, func(context.Context, *handlers.Job) error { ran = true; return nil })
				cfg := testConfig()
				cfg.LaravelVersion, cfg.ModelsConnection = "8.83", "app"
				w, logs := newTestWorker(t, q, reg, cfg, nil)
				runWorker(t, w, 30*time.Second)
				failed := failedRows(t, q)
				if ran != c.wantRun || (len(failed) == 1) != c.wantFail || len(jobRows(t, q)) != 0 {
					t.Fatalf("ran %v (want %v), failed %+v (want %v), jobs %+v\n%s", ran, c.wantRun, failed, c.wantFail, jobRows(t, q), logs)
				}
				if c.wantFail {
					mustContain(t, "exception", failed[0].Exception, `Illuminate\Database\Eloquent\ModelNotFoundException: No query results for model [App\Models\User].`)
				}
				if c.connection != "" {
					mustContain(t, "log", logs.String(), "lives on another database connection")
				}
			})
		})
	}
}
