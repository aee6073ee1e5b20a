package sqs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/sqsproto"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testsqs"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// The store's behaviours are tested one by one (claim, release, delete,
// fail, extend, stop, FIFO, admin) against fauxqs, with failed_jobs in
// SQLite (MariaDB and PostgreSQL too where the database side matters).

func TestMain(m *testing.M) { testsqs.Main(m) }

type env struct {
	srv  *testsqs.Server
	name string // the default queue's name
	url  string
	db   *database.Queue
	s    *Store
	ctx  context.Context
}

type envOptions struct {
	base   string            // queue name base (".fifo" for FIFO)
	attrs  map[string]string // queue attributes
	engine string
	conn   map[string]any // connection keys over the skeleton's
	cache  bool           // a database cache store (overflow pointers)
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	srv := testsqs.Start(t)
	if o.base == "" {
		o.base = "default"
	}
	if o.engine == "" {
		o.engine = appconfig.EngineSQLite
	}
	name, url := srv.Queue(t, o.base, o.attrs)
	cfg := testdb.Config(t, o.engine)
	cfg.ConnectionName = "sqs"
	if o.cache {
		cfg = testdb.WithCache(t, cfg)
	}
	db := testdb.Open(t, cfg)
	if o.cache {
		testdb.CreateCacheTable(t, db)
	}
	conn := map[string]any{"driver": "sqs", "key": "test", "secret": "test", "prefix": srv.Prefix, "queue": name,
		"region": "us-east-1", "endpoint": srv.Endpoint, "suffix": nil, "after_commit": false}
	for k, v := range o.conn {
		conn[k] = v
	}
	pc, err := sqsproto.FromLaravel("sqs", conn, sqsproto.LaravelOptions{Vapor: o.conn["vapor"] == true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	q, err := sqsproto.Open(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, q, db, Options{Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &env{srv: srv, name: name, url: url, db: db, s: s, ctx: ctx}
}

// fixture is a body Laravel 8.83 sent to SQS (testdata/laravel-8.83-sqs).
func fixture(t *testing.T, kind string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "laravel-8.83-sqs", kind+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// claimAll claims until n jobs came (each claim takes what it finds).
func (e *env) claimAll(t *testing.T, n int, opts jobqueue.ClaimOptions) []jobqueue.JobRow {
	t.Helper()
	var rows []jobqueue.JobRow
	testwait.Until(t, 20*time.Second, fmt.Sprintf("%d jobs claimed", n), func() bool {
		got, err := e.s.Claim(e.ctx, []string{e.name}, n-len(rows), opts)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, got...)
		return len(rows) >= n
	})
	return rows
}

// serverReceive receives one message past the store, as another worker
// would, with its receive count.
func (e *env) serverReceive(t *testing.T) (body string, count string, ok bool) {
	t.Helper()
	out, err := e.srv.Call("ReceiveMessage", map[string]any{"QueueUrl": e.url, "MaxNumberOfMessages": 1, "AttributeNames": []string{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := out["Messages"].([]any)
	if len(msgs) == 0 {
		return "", "", false
	}
	m := msgs[0].(map[string]any)
	attrs, _ := m["Attributes"].(map[string]any)
	c, _ := attrs["ApproximateReceiveCount"].(string)
	return m["Body"].(string), c, true
}

// TestClaimLaravelsMessages (claim): the bodies Laravel 8.83 sent come out
// byte for byte, attempt 1 (ApproximateReceiveCount), queue the URL (as
// SqsJob::getQueue), up to 10 a request.
func TestClaimLaravelsMessages(t *testing.T) {
	e := newEnv(t, envOptions{})
	// scalars.json holds emoji (U+1F680), which AWS accepts and fauxqs
	// 2.4.1 rejects (docs/SQS.md's fidelity table): not sent here.
	kinds := []string{"noop", "chain", "closure", "encrypted", "enum_carbon", "models", "retry_options", "batch", "delayed_high", "fails"}
	want := map[string]bool{}
	for _, k := range kinds {
		body := fixture(t, k)
		want[body] = true
		e.srv.Send(t, e.url, body, nil)
	}
	before := e.s.q.Requests().Counts()["ReceiveMessage"]
	rows := e.claimAll(t, len(kinds), jobqueue.ClaimOptions{})
	for _, r := range rows {
		if !want[string(r.Payload)] {
			t.Errorf("a claimed payload is not a body sent: %.80s", r.Payload)
		}
		delete(want, string(r.Payload))
		if r.Attempts != 1 || r.Queue != e.url || r.Reservation == "" || r.ReservedAt == nil {
			t.Errorf("row %+v", r)
		}
	}
	if n := e.s.q.Requests().Counts()["ReceiveMessage"] - before; n > 3 {
		t.Errorf("%d jobs took %d receives (10 a request)", len(kinds), n)
	}
	if _, err := e.s.Delete(e.ctx, rows); err != nil {
		t.Fatal(err)
	}
}

// TestClaimGivesBackOtherClassesUncounted (claim): a job of a class the
// worker does not run is sent again as it was: the next receive, PHP's,
// counts it as its first (attempt 1); the worker's own job is claimed.
func TestClaimGivesBackOtherClassesUncounted(t *testing.T) {
	e := newEnv(t, envOptions{})
	phpOnly := fixture(t, "retry_options") // App\Jobs\RetryOptions
	e.srv.Send(t, e.url, phpOnly, nil)
	e.srv.Send(t, e.url, fixture(t, "noop"), nil)
	rows := e.claimAll(t, 1, jobqueue.ClaimOptions{DisplayNames: []string{`app\jobs\noop`}})
	if !strings.Contains(string(rows[0].Payload), `App\\Jobs\\Noop`) {
		t.Fatalf("claimed %s", rows[0].Payload)
	}
	body, count, ok := e.serverReceive(t)
	if !ok || body != phpOnly || count != "1" {
		t.Fatalf("the job given back: received %v, count %q (want 1: not counted as an attempt)", ok, count)
	}
}

// TestReleaseComesBackWithTheNextAttempt (release): a release with a
// backoff hides the job for the backoff; it comes back as attempt 2.
func TestReleaseComesBackWithTheNextAttempt(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.srv.Send(t, e.url, fixture(t, "noop"), nil)
	r := e.claimAll(t, 1, jobqueue.ClaimOptions{})[0]
	if err := e.s.Release(e.ctx, r, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	if got, _ := e.s.Claim(e.ctx, []string{e.name}, 1, jobqueue.ClaimOptions{}); len(got) != 0 {
		t.Fatal("claimed during the backoff")
	}
	again := e.claimAll(t, 1, jobqueue.ClaimOptions{})[0]
	if again.Attempts != 2 || time.Since(released) < 1500*time.Millisecond {
		t.Fatalf("came back as attempt %d after %s", again.Attempts, time.Since(released))
	}
}

// TestDeleteInBatches (delete): finished jobs go in one DeleteMessageBatch
// per 10; the queue is empty after.
func TestDeleteInBatches(t *testing.T) {
	e := newEnv(t, envOptions{})
	for range 12 {
		e.srv.Send(t, e.url, fixture(t, "noop"), nil)
	}
	rows := e.claimAll(t, 12, jobqueue.ClaimOptions{})
	before := e.s.q.Requests().Counts()["DeleteMessageBatch"]
	lost, err := e.s.Delete(e.ctx, rows)
	if err != nil || len(lost) != 0 {
		t.Fatalf("lost %v, %v", lost, err)
	}
	if n := e.s.q.Requests().Counts()["DeleteMessageBatch"] - before; n != 2 {
		t.Errorf("12 deletes took %d requests", n)
	}
	if a := e.srv.Attributes(t, e.url); a["ApproximateNumberOfMessages"] != "0" || a["ApproximateNumberOfMessagesNotVisible"] != "0" {
		t.Errorf("left: %v", a)
	}
}

// TestFailRecordsTheQueueURL (fail): the failed_jobs row has connection
// sqs and the queue URL as its queue (as Laravel's, fails.failed_jobs_row
// .json), the payload's bytes; the message is gone. On each engine.
func TestFailRecordsTheQueueURL(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, envOptions{engine: engine})
		body := fixture(t, "fails")
		e.srv.Send(t, e.url, body, nil)
		r := e.claimAll(t, 1, jobqueue.ClaimOptions{})[0]
		uuid := "6a757498-2531-4b6f-b32c-1ff168eeab01"
		if err := e.s.Fail(e.ctx, r, uuid, "RuntimeException: deliberate", jobqueue.Followup{}); err != nil {
			t.Fatal(err)
		}
		rows := testdb.FailedRows(t, e.db)
		if len(rows) != 1 || rows[0].Queue != e.url || rows[0].Connection != "sqs" || rows[0].Payload != body || rows[0].UUID != uuid {
			t.Fatalf("failed rows %+v", rows)
		}
		if _, _, ok := e.serverReceive(t); ok {
			t.Fatal("the failed job is still on the queue")
		}
		if a := e.srv.Attributes(t, e.url); a["ApproximateNumberOfMessagesNotVisible"] != "0" {
			t.Fatalf("the failed job is still in flight: %v", a)
		}
	})
}

// TestFailOfALostJobWritesNothing (fail): a job whose visibility ran out
// and another worker received writes no failed row.
func TestFailOfALostJobWritesNothing(t *testing.T) {
	e := newEnv(t, envOptions{attrs: map[string]string{"VisibilityTimeout": "1"}})
	e.srv.Send(t, e.url, fixture(t, "fails"), nil)
	r := e.claimAll(t, 1, jobqueue.ClaimOptions{})[0]
	testwait.Until(t, 10*time.Second, "another worker receives the job", func() bool { _, _, ok := e.serverReceive(t); return ok })
	err := e.s.Fail(e.ctx, r, "6a757498-2531-4b6f-b32c-1ff168eeab01", "x", jobqueue.Followup{})
	if !errors.Is(err, jobqueue.ErrReservationLost) {
		t.Fatalf("Fail of a lost job: %v", err)
	}
	if rows := testdb.FailedRows(t, e.db); len(rows) != 0 {
		t.Fatalf("failed rows %+v", rows)
	}
}

// TestExtendKeepsARunningJobInvisible (extend): with a 2 s visibility
// timeout, a job extended every second stays invisible past it; left
// alone, it comes back. A lost job is left out of the refreshed ones.
func TestExtendKeepsARunningJobInvisible(t *testing.T) {
	e := newEnv(t, envOptions{attrs: map[string]string{"VisibilityTimeout": "2"}})
	if e.s.RetryAfter() != 2*time.Second {
		t.Fatalf("RetryAfter %s, want the queue's visibility timeout", e.s.RetryAfter())
	}
	e.srv.Send(t, e.url, fixture(t, "noop"), nil)
	r := e.claimAll(t, 1, jobqueue.ClaimOptions{})[0]
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		got, err := e.s.Extend(e.ctx, []jobqueue.JobRow{r})
		if err != nil || len(got) != 1 {
			t.Fatalf("Extend: %v %v", got, err)
		}
		if _, _, ok := e.serverReceive(t); ok {
			t.Fatal("another worker received a job being extended")
		}
		time.Sleep(time.Second)
	}
	testwait.Until(t, 10*time.Second, "the job, no longer extended, comes back", func() bool { _, _, ok := e.serverReceive(t); return ok })
	got, err := e.s.Extend(e.ctx, []jobqueue.JobRow{r})
	if err != nil || len(got) != 0 {
		t.Fatalf("Extend of a lost job: %v %v", got, err)
	}
}

// TestUnreserveOnStop (stop): jobs claimed and not started go back at
// once (not after the visibility timeout), not counted as attempts.
func TestUnreserveOnStop(t *testing.T) {
	e := newEnv(t, envOptions{})
	for range 5 {
		e.srv.Send(t, e.url, fixture(t, "noop"), nil)
	}
	rows := e.claimAll(t, 5, jobqueue.ClaimOptions{})
	for _, r := range rows {
		if err := e.s.Unreserve(e.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		_, count, ok := e.serverReceive(t)
		if !ok || count != "1" {
			t.Fatalf("job %d given back: received %v, count %q", i, ok, count)
		}
	}
}

// TestFIFOKeepsEachGroupsOrder (FIFO): three groups of five; claims take
// one message a request; a group's next job comes only after the one
// before it is deleted; each group's jobs come in order.
func TestFIFOKeepsEachGroupsOrder(t *testing.T) {
	e := newEnv(t, envOptions{base: "orders.fifo"})
	for i := range 5 {
		for _, g := range []string{"a", "b", "c"} {
			e.srv.Send(t, e.url, fmt.Sprintf(`{"uuid":"%s%d","displayName":"App\\Jobs\\Noop"}`, g, i),
				map[string]any{"MessageGroupId": g, "MessageDeduplicationId": fmt.Sprintf("%s%d", g, i)})
		}
	}
	next := map[string]int{}
	for done := 0; done < 15; {
		rows, err := e.s.Claim(e.ctx, []string{e.name}, 10, jobqueue.ClaimOptions{})
		if err != nil {
			t.Fatal(err)
		}
		groups := map[string]bool{}
		for _, r := range rows {
			var g string
			var i int
			fmt.Sscanf(strings.Split(string(r.Payload), `"`)[3], "%1s%d", &g, &i)
			if groups[g] {
				t.Fatalf("two jobs of group %s held at once", g)
			}
			groups[g] = true
			if i != next[g] {
				t.Fatalf("group %s: job %d came before %d", g, i, next[g])
			}
			next[g]++
		}
		if _, err := e.s.Delete(e.ctx, rows); err != nil {
			t.Fatal(err)
		}
		done += len(rows)
	}
}

// TestPushFIFOUsesTheJobsGroup (admin): a job Go pushes to a FIFO queue
// takes its command's messageGroup (Queueable::onGroup) and a fresh
// deduplication id; a delay is dropped as Laravel 12.30+ drops it.
func TestPushFIFOUsesTheJobsGroup(t *testing.T) {
	e := newEnv(t, envOptions{base: "orders.fifo"})
	cmd := phpserialize.Object(`App\Jobs\Ship`, phpserialize.Entry{Key: phpserialize.StrKey("messageGroup"), Value: phpserialize.String("order-7")})
	raw, err := payload.BuildObjectPayload(cmd, payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := e.s.Push(e.ctx, jobqueue.PushItem{Payload: raw, Delay: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := e.srv.Call("ReceiveMessage", map[string]any{"QueueUrl": e.url, "MaxNumberOfMessages": 10, "AttributeNames": []string{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := out["Messages"].([]any)
	if len(msgs) == 0 {
		t.Fatal("nothing pushed is visible (the delay must be dropped on FIFO)")
	}
	attrs := msgs[0].(map[string]any)["Attributes"].(map[string]any)
	if attrs["MessageGroupId"] != "order-7" || attrs["MessageDeduplicationId"] == "" {
		t.Fatalf("attributes %v", attrs)
	}
	if got := msgs[0].(map[string]any)["Body"]; got != string(raw) {
		t.Fatalf("body %v", got)
	}
	if a := e.srv.Attributes(t, e.url); a["ApproximateNumberOfMessages"]+a["ApproximateNumberOfMessagesNotVisible"] != "11" {
		t.Fatalf("two pushes of one payload must be two messages (a fresh deduplication id each): %v", a)
	}
}

// TestRetryPutsAFailedJobBack (admin): queue:retry sends the failed
// payload to the queue URL failed_jobs holds and forgets the row.
func TestRetryPutsAFailedJobBack(t *testing.T) {
	e := newEnv(t, envOptions{})
	body := fixture(t, "fails")
	e.srv.Send(t, e.url, body, nil)
	r := e.claimAll(t, 1, jobqueue.ClaimOptions{})[0]
	if err := e.s.Fail(e.ctx, r, "6a757498-2531-4b6f-b32c-1ff168eeab01", "x", jobqueue.Followup{}); err != nil {
		t.Fatal(err)
	}
	res, err := e.s.RetryAll(e.ctx, e.url, nil)
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("retry: %+v %v", res, err)
	}
	got, count, ok := e.serverReceive(t)
	if !ok || got != body || count != "1" {
		t.Fatalf("retried: %v %q %.60s", ok, count, got)
	}
	if rows := testdb.FailedRows(t, e.db); len(rows) != 0 {
		t.Fatalf("failed rows left: %+v", rows)
	}
}

// TestSizeAndClear (admin): size reads ready, delayed and in-flight
// messages apart; clear purges them and returns how many there were.
func TestSizeAndClear(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.srv.Send(t, e.url, fixture(t, "noop"), nil)
	e.srv.Send(t, e.url, fixture(t, "noop"), nil)
	e.srv.Send(t, e.url, fixture(t, "delayed_high"), map[string]any{"DelaySeconds": 60})
	e.claimAll(t, 1, jobqueue.ClaimOptions{})
	sizes, err := e.s.Sizes(e.ctx)
	if err != nil || len(sizes) != 1 || sizes[0] != (jobqueue.QueueSize{Queue: e.name, Ready: 1, Delayed: 1, Reserved: 1}) {
		t.Fatalf("sizes %+v %v", sizes, err)
	}
	n, err := e.s.Clear(e.ctx, "")
	if err != nil || n != 3 {
		t.Fatalf("clear: %d %v", n, err)
	}
}

// TestVaporCountsAttemptsInThePayload: on a Vapor connection the attempt
// is the payload's attempts + 1, and a release sends the job again with
// the attempt written in it (VaporJob::release).
func TestVaporCountsAttemptsInThePayload(t *testing.T) {
	e := newEnv(t, envOptions{conn: map[string]any{"vapor": true}})
	e.srv.Send(t, e.url, `{"uuid":"v","displayName":"App\\Jobs\\Noop","attempts":0}`, nil)
	r := e.claimAll(t, 1, jobqueue.ClaimOptions{})[0]
	if r.Attempts != 1 {
		t.Fatalf("attempt %d", r.Attempts)
	}
	if err := e.s.Release(e.ctx, r, 0); err != nil {
		t.Fatal(err)
	}
	again := e.claimAll(t, 1, jobqueue.ClaimOptions{})[0]
	if again.Attempts != 2 || string(again.Payload) != `{"uuid":"v","displayName":"App\\Jobs\\Noop","attempts":1}` {
		t.Fatalf("after the release: attempt %d, %s", again.Attempts, again.Payload)
	}
}

// TestPointerBodiesReadFromTheCache: with overflow enabled (13.9+), a
// {"@pointer": key} body is the payload the cache holds under key; the
// entry is forgotten once the job is deleted.
func TestPointerBodiesReadFromTheCache(t *testing.T) {
	e := newEnv(t, envOptions{cache: true, conn: map[string]any{"overflow": map[string]any{"enabled": true}}})
	real := fixture(t, "noop")
	key := sqsproto.PointerPrefix + "0acfb4aa-f36b-4d40-8c64-c226a6791954"
	if err := e.s.SharedCache().Put(e.ctx, key, fmt.Appendf(nil, "s:%d:\"%s\";", len(real), real), time.Hour); err != nil {
		t.Fatal(err)
	}
	e.srv.Send(t, e.url, `{"@pointer":"`+key+`"}`, nil)
	r := e.claimAll(t, 1, jobqueue.ClaimOptions{})[0]
	if string(r.Payload) != real {
		t.Fatalf("payload %.80s", r.Payload)
	}
	if _, err := e.s.Delete(e.ctx, []jobqueue.JobRow{r}); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := e.s.SharedCache().Get(e.ctx, key); found {
		t.Fatal("the cache entry outlived the job")
	}
}

// TestTraceDestinationAsPHPsInstrumentation: spans name an SQS queue as
// OpenTelemetry's Laravel instrumentation names SqsQueue's
// (messaging.system "aws_sqs", the queue's URL as SqsQueue::getQueue
// gives it; the connection's default queue for the default queue).
func TestTraceDestinationAsPHPsInstrumentation(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, queue := range []string{"", e.name} {
		if system, name := e.s.TraceDestination(queue); system != "aws_sqs" || name != e.url {
			t.Errorf("TraceDestination(%q) = %q, %q; want aws_sqs, %q", queue, system, name, e.url)
		}
	}
}
