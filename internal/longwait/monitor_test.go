package longwait

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/internal/dashboard/redisjobs"
	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
)

// receiver is a Slack-compatible webhook: it takes {"text": ...} and
// hands each text to the test.
func receiver(t *testing.T) (*httptest.Server, chan string) {
	t.Helper()
	texts := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Text string `json:"text"`
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &msg) != nil || msg.Text == "" {
			http.Error(w, "want a POST of JSON with a text", http.StatusBadRequest)
			return
		}
		texts <- msg.Text
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv, texts
}

// rig is a running monitor of queue "default" on a fake clock, its
// webhook's messages and its metrics.
type rig struct {
	m     *Monitor
	fake  *clock.Fake
	texts chan string
	reg   *prometheus.Registry
	conn  string
}

// startRig runs the snapshot and a monitor of connection's "default"
// queue (threshold 60 s) over it.
func startRig(t *testing.T, connection string, snap *snapshot.Snapshot, fl *fleet.Store) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	snap.AlwaysOn = true
	go snap.Run(ctx)
	srv, texts := receiver(t)
	r := &rig{fake: clock.NewFake(time.Now()), texts: texts, reg: prometheus.NewRegistry(), conn: connection}
	hook, err := NewWebhook(srv.URL, r.fake)
	if err != nil {
		t.Fatal(err)
	}
	r.m, err = New(Config{Connection: connection, Queues: []string{"default"}, Thresholds: Thresholds{connection + ":default": time.Minute},
		Source: &SnapshotSource{Snapshot: snap, Fleet: fl}, Notifiers: []Notifier{hook}, Metrics: NewMetrics(r.reg),
		Logger: zerolog.New(zerolog.NewTestWriter(t)), Clock: r.fake, Reporter: "(laraworker work on test)"})
	if err != nil {
		t.Fatal(err)
	}
	go r.m.Run(ctx)
	testwait.Until(t, 30*time.Second, "the first check", func() bool { return r.m.Checks() >= 1 })
	return r
}

// tick moves the clock to the next check and waits for it to be done
// (its alerts delivered).
func (r *rig) tick(t *testing.T) {
	t.Helper()
	n := r.m.Checks()
	r.fake.Advance(DefaultEvery)
	testwait.Until(t, 30*time.Second, "the next check", func() bool { return r.m.Checks() > n })
}

func (r *rig) quiet(t *testing.T, when string) {
	t.Helper()
	select {
	case text := <-r.texts:
		t.Errorf("%s: the webhook got %q, want nothing", when, text)
	default:
	}
}

func (r *rig) gauge(name string) float64 {
	switch name {
	case "alert":
		return testutil.ToFloat64(r.m.cfg.Metrics.alerting.WithLabelValues(r.conn, "default"))
	case "alerts":
		return testutil.ToFloat64(r.m.cfg.Metrics.alerts.WithLabelValues(r.conn, "default"))
	case "estimate":
		return testutil.ToFloat64(r.m.cfg.Metrics.estimate.WithLabelValues(r.conn, "default"))
	}
	return testutil.ToFloat64(r.m.cfg.Metrics.wait.WithLabelValues(r.conn, "default"))
}

// crossings runs the scenario every queue driver must pass: a job
// waiting 2 minutes raises one alert, kept (not repeated) over the next
// checks; it clears once the queue drains; a new long wait raises a new
// one. old makes a job wait 2 minutes, drain empties the queue.
func crossings(t *testing.T, r *rig, old, drain func()) {
	r.tick(t)
	r.quiet(t, "no job waits")
	old()
	r.tick(t)
	text := testwait.Recv(t, r.texts, 10*time.Second, "the alert")
	if !strings.Contains(text, "Long wait on queue `default` (connection `"+r.conn+"`)") || !strings.Contains(text, "over the 1m0s threshold") ||
		!strings.Contains(text, "has waited 2m") || !strings.Contains(text, "laraworker work on test") {
		t.Errorf("alert %q", text)
	}
	if r.gauge("alert") != 1 || r.gauge("alerts") != 1 || r.gauge("wait") < 120 {
		t.Errorf("alert gauge %v, alerts %v, wait %v: want 1, 1, 120 s or more", r.gauge("alert"), r.gauge("alerts"), r.gauge("wait"))
	}
	r.tick(t)
	r.tick(t)
	r.quiet(t, "two more checks over the threshold")
	if r.gauge("alerts") != 1 {
		t.Errorf("%v alerts after three checks over the threshold, want 1", r.gauge("alerts"))
	}
	drain()
	r.tick(t)
	if text := testwait.Recv(t, r.texts, 10*time.Second, "the clearance"); !strings.Contains(text, "Wait back to normal on queue `default`") {
		t.Errorf("clearance %q", text)
	}
	if r.gauge("alert") != 0 {
		t.Errorf("alert gauge %v after the queue drained, want 0", r.gauge("alert"))
	}
	old()
	r.tick(t)
	testwait.Recv(t, r.texts, 10*time.Second, "the second crossing's alert")
	if r.gauge("alerts") != 2 {
		t.Errorf("%v alerts after a second crossing, want 2", r.gauge("alerts"))
	}
}

// TestLongWaitOnTheDatabaseQueue: the crossings on each engine's jobs
// table; the estimate counts the fleet's live Go worker on the queue by
// its concurrency, with the fleet's mean runtime.
func TestLongWaitOnTheDatabaseQueue(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		cfg := testdb.Config(t, engine)
		q := testdb.Open(t, cfg)
		fl := fleetOn(t, q.DB(), q.Dialect(), cfg.TablePrefix+"lw"+strings.TrimPrefix(cfg.JobsTable, "jobs_")+"_")
		goWorkerOn(t, fl, "default", 4, 2*time.Second)
		snap, err := snapshot.New(snapshot.Config{Fleet: fl, Tables: snapshot.Tables{DB: q.DB(), Dialect: q.Dialect(), Jobs: cfg.JobsTable,
			Failed: cfg.FailedTable, Location: time.UTC, RetryAfter: q.RetryAfter()}})
		if err != nil {
			t.Fatal(err)
		}
		r := startRig(t, "database", snap, fl)
		crossings(t, r, func() { pushOld(t, q, cfg, 6) }, func() { exec(t, q, "delete from "+q.Dialect().Quote(cfg.JobsTable)) })
		if got := r.gauge("estimate"); got != 3 {
			t.Errorf("estimate %v s, want 6 ready × 2 s ÷ 4 (the Go worker's concurrency) = 3 s", got)
		}
	})
}

// TestLongWaitOnRedis: the crossings on a Redis queue, whose oldest job's
// wait is read from its createdAt (a real Laravel 12.67 payload).
func TestLongWaitOnRedis(t *testing.T) {
	srv := testredis.Start(t)
	rq, err := redisproto.Open(context.Background(), redisproto.Config{Connection: "redis", Queue: "default", RetryAfter: 90 * time.Second,
		Redis: redisproto.RedisConfig{Name: "default", Client: "phpredis", Addrs: []string{srv.Addr}, Prefix: "app_"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rq.Close() })
	cfg := testdb.Config(t, appconfig.EngineSQLite)
	q := testdb.Open(t, cfg)
	fl := fleetOn(t, q.DB(), q.Dialect(), "")
	snap, err := snapshot.New(snapshot.Config{Fleet: fl, Jobs: redisjobs.New(rq, redisjobs.Options{Queues: []string{"default"}}),
		Tables: snapshot.Tables{DB: q.DB(), Dialect: q.Dialect(), Failed: cfg.FailedTable, Location: time.UTC, RetryAfter: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile(filepath.Join("..", "..", "testdata", "laravel-12.67", "payloads", "scalars.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := startRig(t, "redis", snap, fl)
	old := func() {
		created := strconv.FormatInt(time.Now().Add(-2*time.Minute).Unix(), 10)
		raw := strings.Replace(string(fixture), `"createdAt":1796032508`, `"createdAt":`+created, 1)
		p, _, err := redisproto.PreparePayload([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rq.Push(context.Background(), "default", p); err != nil {
			t.Fatal(err)
		}
	}
	drain := func() { srv.Client(t).Del(context.Background(), "app_queues:default") }
	crossings(t, r, old, drain)
}

func fleetOn(t *testing.T, db *sql.DB, d fleet.Dialect, prefix string) *fleet.Store {
	t.Helper()
	fl := fleet.On(db, d, prefix)
	if err := fl.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.DropTables(context.Background()) })
	return fl
}

// goWorkerOn records a live Go worker on queue with its concurrency, and
// a minute of history whose jobs each ran for runtime.
func goWorkerOn(t *testing.T, fl *fleet.Store, queue string, concurrency int64, runtime time.Duration) {
	t.Helper()
	now := time.Now().Unix()
	ctx := context.Background()
	w := fleet.WorkerRow{ID: "go:test:1:" + strconv.FormatInt(now, 10), Kind: fleet.KindGo, Name: "default", Host: "test", PID: 1,
		Queues: []string{queue}, Concurrency: concurrency, StartedAt: now, LastSeenAt: now}
	var run fleet.Histogram
	for range 10 {
		run.Observe(runtime)
	}
	if err := fl.UpsertWorker(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := fl.AddHistory(ctx, []fleet.HistoryRow{{Minute: now / 60 * 60, Queue: queue, Class: `App\Jobs\A`, Done: 10, Run: run}}); err != nil {
		t.Fatal(err)
	}
}

// pushOld pushes n jobs that have been available for 2 minutes.
func pushOld(t *testing.T, q *database.Queue, cfg appconfig.Config, n int) {
	t.Helper()
	fixture, err := os.ReadFile(filepath.Join("..", "..", "testdata", "laravel-12.67", "payloads", "scalars.json"))
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := q.Push(context.Background(), jobqueue.PushItem{Queue: "default", Payload: fixture}); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, q, fmt.Sprintf("update %s set available_at = ?", q.Dialect().Quote(cfg.JobsTable)), time.Now().Add(-2*time.Minute).Unix())
}

func exec(t *testing.T, q *database.Queue, query string, args ...any) {
	t.Helper()
	if _, err := q.DB().Exec(q.Dialect().Rebind(query), args...); err != nil {
		t.Fatal(err)
	}
}
