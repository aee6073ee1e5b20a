package e2e

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
)

// The test app's hook classes and what they record in job_runs.
const (
	hookedJob       = `App\Jobs\Hooks\HookedJob`
	goJobException  = `Laraworker\Bridge\GoJobException`
	goQueueJobClass = `Laraworker\Bridge\GoQueueJob`
	hooksQueue      = "default" // the bridge's default: the default connection's default queue
)

// installHookConfig writes config/laraworker.php routing the hook test
// classes to "go", with route_batches_with_callbacks as given.
func (s *suite) installHookConfig(t *testing.T, routeBatches bool) {
	t.Helper()
	path := filepath.Join(s.app, "config", "laraworker.php")
	src := "<?php\n\nreturn [\n    'queue' => 'go',\n    'connection' => null,\n    'route_batches_with_callbacks' => " +
		strconv.FormatBool(routeBatches) + ",\n    'jobs' => [\n" + hookRoutes + "    ],\n];\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
}

// failInGo makes the writes a Go worker makes when it fails a job: the
// jobs row goes, a failed_jobs row comes.
func (s *suite) failInGo(t *testing.T, j jobRow, class, message string) {
	t.Helper()
	s.exec(t, "delete from jobs where id = ?", j.ID)
	s.exec(t, "insert into failed_jobs (uuid, connection, queue, payload, exception, failed_at) values (?, ?, ?, ?, ?, ?)",
		j.UUID, "database", j.Queue, j.Payload, class+": "+message+" in laraworker", time.Now().UTC().Format("2006-01-02 15:04:05"))
}

// succeedInGo deletes the jobs row as a Go worker does after a success.
func (s *suite) succeedInGo(t *testing.T, j jobRow) {
	t.Helper()
	s.exec(t, "delete from jobs where id = ?", j.ID)
}

// pushHook puts a hook job built by bridgeproto on the hooks queue, as a
// Go worker would (attempts > 0: a worker that reserved it died).
func (s *suite) pushHook(t *testing.T, raw []byte, attempts int64) {
	t.Helper()
	now := s.now()
	s.exec(t, "insert into jobs (queue, payload, attempts, reserved_at, available_at, created_at) values (?, ?, ?, null, ?, ?)",
		hooksQueue, string(raw), attempts, now, now)
}

func (s *suite) pushFailureHooks(t *testing.T, j jobRow, class, message string, batchCallbacks []string, attempts int64) {
	t.Helper()
	raw, err := bridgeproto.FailureHooksPayload(bridgeproto.Failure{
		Payload: []byte(j.Payload), Connection: "database", Queue: j.Queue, JobID: strconv.FormatInt(j.ID, 10), Attempts: 1,
		ExceptionClass: class, ExceptionMessage: message, BatchCallbacks: batchCallbacks,
	}, bridgeproto.Options{LaravelVersion: "8.83"})
	if err != nil {
		t.Fatal(err)
	}
	s.pushHook(t, raw, attempts)
}

// runsSince are the job_runs rows after id.
func (s *suite) runsSince(t *testing.T, id int64) []runRow {
	t.Helper()
	var out []runRow
	for _, r := range s.runs(t) {
		if r.ID > id {
			out = append(out, r)
		}
	}
	return out
}

func lastRunID(runs []runRow) int64 {
	if len(runs) == 0 {
		return 0
	}
	return runs[len(runs)-1].ID
}

func runClasses(runs []runRow) string {
	var names []string
	for _, r := range runs {
		names = append(names, r.Class)
	}
	return strings.Join(names, ",")
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// jobOnGo is the one jobs row on "go".
func (s *suite) jobOnGo(t *testing.T) jobRow {
	t.Helper()
	var out []jobRow
	for _, j := range s.jobs(t) {
		if j.Queue == "go" {
			out = append(out, j)
		}
	}
	if len(out) != 1 {
		t.Fatalf("jobs on go: %+v, want one", out)
	}
	return out[0]
}

// TestBridgeFailureHooks: for a job a Go worker failed, the
// RunFailureHooks job Go pushes runs on a PHP `queue:work` what Laravel
// runs at a failure, in Laravel's order, once: the chain's catch
// callbacks, the class's failed() on a freshly unserialized command (an
// encrypted one decrypted), with Go's exception (Laravel's own class for
// MaxAttemptsExceededException), then JobFailed with the original job's
// uuid, queue, connection, id, attempts and payload. PHP writes no second
// failed_jobs row and dispatches no next chain link. A model that is gone
// skips everything but JobFailed, as in Laravel; a hook job whose worker
// died is not run again.
func TestBridgeFailureHooks(t *testing.T) { onEachDB(t, testBridgeFailureHooks) }

func testBridgeFailureHooks(t *testing.T, s *suite) {
	s.installHookConfig(t, false)
	s.phpLog(t)

	// A chain link with a catch callback, failed with a Go error.
	s.hooks(t, "hooked-chain")
	link := s.jobOnGo(t)
	s.failInGo(t, link, "laraworker/handlers.ExecError", "link 1 failed in Go: exit status 3")
	s.pushFailureHooks(t, link, "laraworker/handlers.ExecError", "link 1 failed in Go: exit status 3", nil, 0)
	s.phpWork(t, "--once", "--queue="+hooksQueue)
	runs := s.runs(t)
	if got := runClasses(runs); got != "chain:catch,failed:"+hookedJob+",event:JobFailed" {
		t.Fatalf("ran %s, want chain:catch, failed(), JobFailed in that order", got)
	}
	if r := runs[0].Result; r["exception"] != goJobException || r["message"] != "link 1 failed in Go: exit status 3" {
		t.Errorf("chain catch got %v", r)
	}
	if r := runs[1].Result; r["label"] != "link 1" || r["touched"] != false || r["exception"] != goJobException ||
		r["goClass"] != "laraworker/handlers.ExecError" || r["message"] != "link 1 failed in Go: exit status 3" {
		t.Errorf("failed() got %v", r)
	}
	ev := runs[2].Result
	if ev["uuid"] != link.UUID || ev["name"] != hookedJob || ev["connection"] != "database" || ev["queue"] != "go" ||
		num(t, ev["jobId"]) != link.ID || num(t, ev["attempts"]) != 1 || ev["exception"] != goJobException ||
		ev["payloadMd5"] != md5hex(link.Payload) || ev["jobClass"] != goQueueJobClass {
		t.Errorf("JobFailed got %v; want job %d %s", ev, link.ID, link.UUID)
	}
	if f := s.failed(t); len(f) != 1 || f[0].UUID != link.UUID {
		t.Errorf("failed_jobs %+v; want only the row Go wrote", f)
	}
	if log := s.phpLog(t); strings.Contains(log, ".ERROR") {
		t.Errorf("the hooks logged an error (a second failed_jobs insert?):\n%s", tail(log))
	}
	if left := s.jobs(t); len(left) != 0 {
		t.Errorf("jobs left %+v; want none (no next link after a failure)", left)
	}
	s.phpWork(t, "--once", "--queue="+hooksQueue)
	if again := s.runsSince(t, lastRunID(runs)); len(again) != 0 {
		t.Errorf("a second worker ran %s", runClasses(again))
	}

	// An encrypted command, failed with Laravel's own exception class.
	mark := lastRunID(s.runs(t))
	s.hooks(t, "hooked-encrypted")
	enc := s.jobOnGo(t)
	if p, _ := payload.Parse([]byte(enc.Payload)); payload.IsPlainCommand(p.Data.Command) {
		t.Fatalf("HookedEncryptedJob's command is not encrypted: %s", p.Data.Command)
	}
	maxAttempts := `Illuminate\Queue\MaxAttemptsExceededException`
	s.failInGo(t, enc, maxAttempts, `App\Jobs\Hooks\HookedEncryptedJob has been attempted too many times.`)
	s.pushFailureHooks(t, enc, maxAttempts, `App\Jobs\Hooks\HookedEncryptedJob has been attempted too many times.`, nil, 0)
	s.phpWork(t, "--once", "--queue="+hooksQueue)
	runs = s.runsSince(t, mark)
	if got := runClasses(runs); got != `failed:App\Jobs\Hooks\HookedEncryptedJob,event:JobFailed` {
		t.Fatalf("ran %s", got)
	}
	if r := runs[0].Result; r["label"] != "encrypted" || r["exception"] != maxAttempts || r["goClass"] != nil {
		t.Errorf("failed() of the encrypted job got %v", r)
	}

	// The job's model is gone by the time PHP runs the hooks.
	mark = lastRunID(s.runs(t))
	s.hooks(t, "hooked-model")
	gone := s.jobOnGo(t)
	s.exec(t, "delete from podcasts where id = 55")
	s.failInGo(t, gone, "RuntimeException", "failed in Go")
	s.pushFailureHooks(t, gone, "RuntimeException", "failed in Go", nil, 0)
	s.phpWork(t, "--once", "--queue="+hooksQueue)
	if got := runClasses(s.runsSince(t, mark)); got != "event:JobFailed" {
		t.Errorf("with the model gone, ran %s; want JobFailed only", got)
	}
	if f := s.failed(t); len(f) != 3 {
		t.Errorf("%d failed_jobs rows; want Go's three (the hook job itself did not fail)", len(f))
	}

	// A Class@method string job: its handler's failed($data, $e, $uuid).
	mark = lastRunID(s.runs(t))
	str := jobRow{UUID: "5b0f3f4e-1d3c-4c7e-9a53-0d6a3c2f9e11", Class: `App\Jobs\Hooks\StringHandler`}
	str.Queue, str.ID = "go", 999999
	str.Payload = `{"uuid":"` + str.UUID + `","displayName":"App\\Jobs\\Hooks\\StringHandler","job":"App\\Jobs\\Hooks\\StringHandler@handle",` +
		`"maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"data":{"podcastId":42}}`
	s.failInGo(t, str, "RuntimeException", "string job failed in Go")
	s.pushFailureHooks(t, str, "RuntimeException", "string job failed in Go", nil, 0)
	s.phpWork(t, "--once", "--queue="+hooksQueue)
	runs = s.runsSince(t, mark)
	if got := runClasses(runs); got != `failed:App\Jobs\Hooks\StringHandler,event:JobFailed` {
		t.Fatalf("string job: ran %s", got)
	}
	if r := runs[0].Result; r["uuid"] != str.UUID || !sameJSON(r["data"], map[string]any{"podcastId": json.Number("42")}) || r["exception"] != goJobException {
		t.Errorf("the string job's failed() got %v", r)
	}

	// A hook job whose PHP worker died (attempts already 1) fails instead
	// of running the hooks a second time.
	mark = lastRunID(s.runs(t))
	s.exec(t, "delete from failed_jobs")
	s.hooks(t, "hooked")
	plain := s.jobOnGo(t)
	s.failInGo(t, plain, "RuntimeException", "failed in Go")
	s.pushFailureHooks(t, plain, "RuntimeException", "failed in Go", nil, 1)
	s.phpWork(t, "--once", "--queue="+hooksQueue)
	if got := s.runsSince(t, mark); len(got) != 0 {
		t.Errorf("a hook job on its second attempt ran %s", runClasses(got))
	}
	f := s.failed(t)
	if len(f) != 2 || !strings.Contains(f[1].Payload, `"displayName":"Laraworker\\Bridge\\Jobs\\RunFailureHooks"`) ||
		!strings.Contains(f[1].Exception, "MaxAttemptsExceededException") {
		t.Errorf("failed_jobs %+v; want Go's row and the hook job's", f)
	}
}

// batchMembers maps a hooked-batch's member labels to their jobs rows.
func (s *suite) batchMembers(t *testing.T, queue string) map[string]jobRow {
	t.Helper()
	out := map[string]jobRow{}
	for _, j := range s.jobs(t) {
		for _, label := range []string{"member 1", "member 2", "member 3"} {
			if j.Queue == queue && strings.Contains(j.Payload, `\"`+label+`\"`) {
				out[label] = j
			}
		}
	}
	if len(out) != 3 {
		t.Fatalf("batch members on %s: %+v", queue, out)
	}
	return out
}

// batchOptions reads the batch's declared callbacks as a Go worker would.
func (s *suite) batchOptions(t *testing.T, id string) bridgeproto.BatchOptions {
	t.Helper()
	var raw []byte
	if err := s.q.DB().QueryRowContext(s.ctx(t), s.q.Dialect().Rebind("select options from job_batches where id = ?"), id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if s.driver == "pgsql" { // DatabaseBatchRepository base64-encodes options on PostgreSQL
		dec, err := base64.StdEncoding.DecodeString(string(raw))
		if err != nil {
			t.Fatal(err)
		}
		raw = dec
	}
	o, err := bridgeproto.ReadBatchOptions(raw)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// goBatch plays a Go worker's side of a batch: each outcome updates the
// counters as Laravel's repository does and pushes the hook job
// bridgeproto decides on.
type goBatch struct {
	s                     *suite
	id                    string
	total, pending, fails int64
	failedIDs             []string
	opts                  bridgeproto.BatchOptions
}

func (b *goBatch) update(t *testing.T) {
	t.Helper()
	ids, _ := json.Marshal(b.failedIDs)
	b.s.exec(t, "update job_batches set pending_jobs = ?, failed_jobs = ?, failed_job_ids = ? where id = ?", b.pending, b.fails, string(ids), b.id)
}

func (b *goBatch) state() bridgeproto.BatchState {
	return bridgeproto.BatchState{TotalJobs: b.total, PendingJobs: b.pending, FailedJobs: b.fails, Options: b.opts}
}

func (b *goBatch) succeed(t *testing.T, j jobRow) {
	t.Helper()
	b.s.succeedInGo(t, j)
	b.pending--
	b.update(t)
	which, err := bridgeproto.AfterSuccess("8.83", b.state())
	if err != nil {
		t.Fatal(err)
	}
	if len(which) == 0 {
		return
	}
	raw, err := bridgeproto.BatchCallbacksPayload(bridgeproto.BatchCallbacks{BatchID: b.id, Which: which}, bridgeproto.Options{LaravelVersion: "8.83"})
	if err != nil {
		t.Fatal(err)
	}
	b.s.pushHook(t, raw, 0)
}

func (b *goBatch) fail(t *testing.T, j jobRow, message string) {
	t.Helper()
	b.s.failInGo(t, j, "RuntimeException", message)
	b.fails++
	b.failedIDs = append(b.failedIDs, j.UUID)
	b.update(t)
	which, err := bridgeproto.AfterFailure("8.83", b.state())
	if err != nil {
		t.Fatal(err)
	}
	b.s.pushFailureHooks(t, j, "RuntimeException", message, which, 0)
}

// TestBridgeBatchCallbacks: the members of a batch with then/catch/finally
// callbacks go to Go only with route_batches_with_callbacks; their
// callbacks then run in PHP from the hook jobs Go pushes, each once, as
// Laravel's Batch runs them: catch on the first failure (before the failed
// job's failed() and JobFailed), finally when pending equals failed (with
// the exception when a failure completes the batch, as 8.x passes it),
// then only when all succeeded.
func TestBridgeBatchCallbacks(t *testing.T) { onEachDB(t, testBridgeBatchCallbacks) }

func testBridgeBatchCallbacks(t *testing.T, s *suite) {
	s.installHookConfig(t, false)
	dispatchedBatch(t, s.hooks(t, "hooked-batch"))
	s.batchMembers(t, "default") // stays on PHP without the switch
	s.exec(t, "delete from jobs")

	s.installHookConfig(t, true)
	for _, c := range []struct {
		name     string
		outcomes string // per member: s(ucceed) or f(ail)
		want     string
	}{
		{"a failure, then a success", "sfs", "batch:catch,failed:" + hookedJob + ",event:JobFailed,batch:finally"},
		{"all succeed", "sss", "batch:then,batch:finally"},
		{"the last one fails", "ssf", "batch:catch,batch:finally,failed:" + hookedJob + ",event:JobFailed"},
	} {
		mark := lastRunID(s.runs(t))
		id := dispatchedBatch(t, s.hooks(t, "hooked-batch"))
		members := s.batchMembers(t, "go")
		b := &goBatch{s: s, id: id, total: 3, pending: 3, failedIDs: []string{}, opts: s.batchOptions(t, id)}
		if !b.opts.AllowFailures || !b.opts.Then || !b.opts.Catch || !b.opts.Finally {
			t.Fatalf("batch options %+v", b.opts)
		}
		for i, o := range c.outcomes {
			j := members["member "+strconv.Itoa(i+1)]
			if o == 's' {
				b.succeed(t, j)
			} else {
				b.fail(t, j, "member "+strconv.Itoa(i+1)+" failed in Go")
			}
		}
		s.phpWork(t, "--stop-when-empty", "--queue="+hooksQueue)
		runs := s.runsSince(t, mark)
		if got := runClasses(runs); got != c.want {
			t.Errorf("%s: ran %s\nwant %s\nfailed jobs %+v\nlog %s", c.name, got, c.want, s.failed(t), s.phpLog(t))
			continue
		}
		for _, r := range runs {
			switch r.Class {
			case "batch:then":
				if r.Result["batchId"] != id || num(t, r.Result["pending"]) != 0 || num(t, r.Result["failed"]) != 0 {
					t.Errorf("%s: then saw %v", c.name, r.Result)
				}
			case "batch:catch":
				if r.Result["batchId"] != id || r.Result["exception"] != goJobException || !strings.HasSuffix(r.Result["message"].(string), "failed in Go") {
					t.Errorf("%s: catch got %v", c.name, r.Result)
				}
			case "batch:finally":
				want := any(nil)
				if strings.HasSuffix(c.outcomes, "f") {
					want = goJobException // 8.x's recordFailedJob passes the exception to finally
				}
				if r.Result["batchId"] != id || r.Result["exception"] != want {
					t.Errorf("%s: finally got %v, want exception %v", c.name, r.Result, want)
				}
			}
		}
		if left := s.jobs(t); len(left) != 0 {
			t.Errorf("%s: jobs left %+v", c.name, left)
		}
	}
}

// TestBridgeHookJobsAsPHPQueuesThem: the hook job payloads bridgeproto
// builds are byte for byte the ones Laravel 8.83 writes when PHP queues
// the same RunFailureHooks and RunBatchCallbacks objects.
func TestBridgeHookJobsAsPHPQueuesThem(t *testing.T) { onEachDB(t, testBridgeHookJobsAsPHPQueuesThem) }

func testBridgeHookJobsAsPHPQueuesThem(t *testing.T, s *suite) {
	if s != suites[0] {
		t.Skip("the payload does not depend on the database: run on the first one only")
	}
	for _, c := range []struct {
		kind  string
		build func(bridgeproto.Options) ([]byte, error)
	}{
		{"php-failure-hooks", func(o bridgeproto.Options) ([]byte, error) {
			return bridgeproto.FailureHooksPayload(bridgeproto.Failure{Payload: []byte(`{"uuid":"u-1"}`), Connection: "database", Queue: "go",
				JobID: "12", Attempts: 3, ExceptionClass: `Illuminate\Queue\MaxAttemptsExceededException`,
				ExceptionMessage: `Ünïcode "quoted" / slash`, BatchCallbacks: []string{"catch", "finally"}}, o)
		}},
		{"php-batch-callbacks", func(o bridgeproto.Options) ([]byte, error) {
			return bridgeproto.BatchCallbacksPayload(bridgeproto.BatchCallbacks{BatchID: "9a1c", Which: []string{"then", "finally"}}, o)
		}},
	} {
		s.exec(t, "delete from jobs")
		s.hooks(t, c.kind)
		rows := s.jobs(t)
		if len(rows) != 1 || rows[0].Queue != "php-built" {
			t.Fatalf("%s queued %+v", c.kind, rows)
		}
		got, err := c.build(bridgeproto.Options{LaravelVersion: "8.83", UUID: rows[0].UUID})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != rows[0].Payload {
			t.Errorf("%s:\nGo  %s\nPHP %s", c.kind, got, rows[0].Payload)
		}
	}
}
