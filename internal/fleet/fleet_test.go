package fleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"os"
	"strings"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/worker"
)

// newStore creates laraworker's tables under a fresh prefix beside q's.
func newStore(t *testing.T, q *database.Queue) *Store {
	t.Helper()
	s := NewStore(q.DB(), q.Dialect(), TablesWithPrefix("lw_"+testdsn.Suffix(t)+"_"))
	ctx := context.Background()
	if err := s.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables is not idempotent: %v", err)
	}
	t.Cleanup(func() { _ = s.DropTables(context.Background()) })
	return s
}

func TestWorkerRowsRoundTrip(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		s, ctx := newStore(t, q), context.Background()
		w := WorkerRow{ID: "go:h:1:2", Kind: KindGo, Name: "images", Host: "h", PID: 1, Queues: []string{"high", "default"},
			Concurrency: 8, StartedAt: 100, LastSeenAt: 105, Done: 3, Failed: 1, Released: 2, MemoryBytes: 1 << 20,
			Paused: true, PausedQs: []string{"high"}, Running: []RunningJob{{ID: 7, UUID: "u", Class: `App\Jobs\X`, Queue: "high", Attempt: 2, Since: 104}},
			Version: "dev"}
		if err := s.UpsertWorker(ctx, w); err != nil {
			t.Fatal(err)
		}
		w.LastSeenAt, w.Done = 110, 9
		if err := s.UpsertWorker(ctx, w); err != nil {
			t.Fatal(err)
		}
		got, err := s.Workers(ctx)
		if err != nil || len(got) != 1 {
			t.Fatalf("Workers: %v %+v", err, got)
		}
		g := got[0]
		if g.LastSeenAt != 110 || g.Done != 9 || !g.Paused || len(g.Queues) != 2 || g.PausedQs[0] != "high" ||
			len(g.Running) != 1 || g.Running[0].Class != `App\Jobs\X` || g.StoppedAt != nil {
			t.Errorf("row read back: %+v", g)
		}
		if err := s.MarkStopped(ctx, w.ID, 120); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Workers(ctx)
		if got[0].StoppedAt == nil || *got[0].StoppedAt != 120 || len(got[0].Running) != 0 {
			t.Errorf("after MarkStopped: %+v", got[0])
		}
		if err := s.Prune(ctx, time.Unix(120, 0).Add(WorkerKeep+time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got, _ = s.Workers(ctx); len(got) != 0 {
			t.Errorf("a worker not seen for a day was not pruned: %+v", got)
		}
	})
}

// TestWorkerRowsAsPHPWritesThem: a worker row the bridge's PHP recorder
// wrote is read whatever shape json_encode gave its lists: a list with
// holes as an object (its values in order), an empty one as {} too.
func TestWorkerRowsAsPHPWritesThem(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		s, ctx := newStore(t, q), context.Background()
		if err := s.UpsertWorker(ctx, WorkerRow{ID: "php:h:1:2", Kind: KindPHP, Host: "h", PID: 1, StartedAt: 100, LastSeenAt: 100}); err != nil {
			t.Fatal(err)
		}
		d := q.Dialect()
		_, err := q.DB().ExecContext(ctx, d.Rebind(fmt.Sprintf("update %s set %s = ?, %s = ?, %s = ?", d.Quote(s.t.Workers),
			d.Quote("queues"), d.Quote("paused_queues"), d.Quote("running"))),
			`{"0":"high","2":"low"}`, `{}`, `{"1":{"id":7,"uuid":"u","class":"App\\Jobs\\X","queue":"high","attempt":1,"since":99}}`)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Workers(ctx)
		if err != nil || len(got) != 1 {
			t.Fatalf("Workers: %v %+v", err, got)
		}
		g := got[0]
		if strings.Join(g.Queues, ",") != "high,low" || g.PausedQs == nil || len(g.PausedQs) != 0 || len(g.Running) != 1 || g.Running[0].Class != `App\Jobs\X` {
			t.Errorf("row read back: %+v", g)
		}
	})
}

func TestHistoryAddsUp(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		s, ctx := newStore(t, q), context.Background()
		row := HistoryRow{Minute: 600, Queue: "default", Class: `App\Jobs\A`, Done: 2, Failed: 1}
		for range 2 {
			if err := s.AddHistory(ctx, []HistoryRow{row, {Minute: 660, Queue: "default", Class: `App\Jobs\A`, Released: 1}}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.History(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Done != 4 || got[0].Failed != 2 || got[1].Released != 2 {
			t.Errorf("history: %+v", got)
		}
		if err := s.Prune(ctx, time.Unix(660, 0).Add(HistoryKeep)); err != nil {
			t.Fatal(err)
		}
		if got, _ = s.History(ctx, 0); len(got) != 1 || got[0].Minute != 660 {
			t.Errorf("after pruning: %+v", got)
		}
	})
}

// TestPauseFromTable runs a real worker on a real queue through the
// pauses of the table (pauseAndResume, on the real clock: the claim loop
// asks for reads and beats read too), and the outcomes the worker wrote
// (Config.Written) reach the history table.
func TestPauseFromTable(t *testing.T) {
	t.Parallel() // waits on real time and child processes: beside the other waiting tests
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		hb := &Heartbeat{Every: 100 * time.Millisecond, PollEvery: 50 * time.Millisecond}
		r := startPauseRig(t, q, hb)
		s, ctx, waitFor := r.s, context.Background(), r.waitFor
		r.pauseAndResume(func() {})

		waitFor("the history to count 4 done", func() bool {
			rows, err := s.History(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			var done int64
			for _, r := range rows {
				if r.Class != `App\Jobs\NoopJob` {
					t.Fatalf("history class %q", r.Class)
				}
				done += r.Done
			}
			return done == 4
		})
		waitFor("the recent jobs to list the 4 jobs", func() bool {
			jobs, err := s.Recent(ctx, 10, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range jobs {
				if j.Worker != hb.ID() || j.Class != `App\Jobs\NoopJob` || j.Outcome != OutcomeDone || j.Attempt != 1 || j.UUID == "" {
					t.Fatalf("recent job %+v", j)
				}
			}
			return len(jobs) == 4
		})
		if stats, err := s.ClassStats(ctx, 0); err != nil || len(stats) != 2 || stats[0].Run.Count()+stats[1].Run.Count() != 4 {
			t.Errorf("class stats: %+v %v", stats, err)
		}
		// A beat writes the worker's row, then the history: the row can lag
		// one beat behind.
		var rows []WorkerRow
		waitFor("the worker's row to count 4 done", func() bool {
			var err error
			rows, err = s.Workers(ctx)
			return err == nil && len(rows) == 1 && rows[0].Done == 4
		})
		if rows[0].ID != hb.ID() || rows[0].Concurrency != 0 && rows[0].Concurrency != int64(hb.Concurrency) {
			t.Errorf("worker rows: %+v", rows)
		}
	})
}

func TestClassOf(t *testing.T) {
	for raw, want := range map[string]string{
		`{"uuid":"x","displayName":"App\\Jobs\\A","job":"y"}`: `App\Jobs\A`,
		`{"displayName":"Closure (web.php:12)"}`:              `Closure (web.php:12)`,
		`{"uuid":"x","displayName":"App\\Jo`:                  "",
		`{"uuid":"x"}`:                                        "",
		`{"displayName":"App\\Jobs\\\u00c9t\u00e9"}`:          `App\Jobs\Été`,
		`{"displayName":"App\\Jobs\\Été"}`:                    `App\Jobs\Été`,
		`{"displayName":"A\"B\/C"}`:                           `A"B/C`,
		`{"displayName":"A\\"}`:                               `A\`,
	} {
		got, _ := ClassOf([]byte(raw))
		if got != want {
			t.Errorf("ClassOf(%s) = %q, want %q", raw, got, want)
		}
	}
}

// noopPayload is the payload `dispatch(new NoopJob)` wrote (the fixture
// generated by the Laravel 8 test app), with a fresh uuid.
// pauseRig is a real worker on a real queue (queues a and b) with hb
// reporting on it and applying the pauses of laraworker's table.
type pauseRig struct {
	t  *testing.T
	q  *database.Queue
	s  *Store
	w  *worker.Worker
	hb *Heartbeat
}

// startPauseRig starts the worker, whose claim loop reads the pauses
// (worker.Config.BeforeClaim), and hb (its Store, Worker and Counts set
// here), both stopped at the test's end.
func startPauseRig(t *testing.T, q *database.Queue, hb *Heartbeat) *pauseRig {
	t.Helper()
	r := &pauseRig{t: t, q: q, s: newStore(t, q), hb: hb}
	reg := handlers.NewRegistry()
	reg.Handle(`App\Jobs\NoopJob`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
	counts := NewCounts(nil)
	cfg := worker.Config{Queues: []string{"a", "b"}, Sleep: 50 * time.Millisecond, Concurrency: 2, Written: counts.Written, Ran: counts.Ran}
	cfg.BeforeClaim = hb.ReadPausesSoon
	var err error
	if r.w, err = worker.New(q, reg, cfg); err != nil {
		t.Fatal(err)
	}
	hb.Store, hb.Worker, hb.Counts = r.s, r.w, counts
	runCtx, stop := context.WithCancel(context.Background())
	hb.Start(runCtx)
	hbDone := make(chan struct{})
	go func() { hb.Run(runCtx); close(hbDone) }()
	wDone := make(chan struct{})
	go func() { r.w.Run(runCtx); close(wDone) }()
	t.Cleanup(func() { stop(); <-wDone; <-hbDone })
	return r
}

func (r *pauseRig) push(queue string) {
	r.t.Helper()
	if _, err := r.q.Push(context.Background(), jobqueue.PushItem{Queue: queue, Payload: noopPayload(r.t)}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *pauseRig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	testwait.Until(r.t, 10*time.Second, what, cond)
}

// left is how many jobs queue holds.
func (r *pauseRig) left(queue string) int64 {
	var n int64
	q := r.q
	if err := q.DB().QueryRow(q.Dialect().Rebind("select count(*) from "+q.Dialect().Quote(q.Config().JobsTable)+" where queue = ?"), queue).Scan(&n); err != nil {
		r.t.Fatal(err)
	}
	return n
}

// loopsPass waits for a whole iteration of the worker's claim loop to
// begin after now: what it did not claim by then, it does not claim
// while nothing changes.
func (r *pauseRig) loopsPass(what string) {
	r.t.Helper()
	from := r.w.Stats().Loops
	r.waitFor(what, func() bool { return r.w.Stats().Loops >= from+2 })
}

// pauseAndResume runs four jobs through pauses set in the table: a
// worker pause holds a job pushed after it until it is cleared, and a
// queue pause holds queue b only. due is called after each change of the
// table, before waiting for the worker to see it (a test whose clock
// keeps reads from coming on their own makes the next read due there).
func (r *pauseRig) pauseAndResume(due func()) {
	t, s, w, ctx := r.t, r.s, r.w, context.Background()
	t.Helper()
	r.push("a")
	r.waitFor("the first job to run", func() bool { return w.Stats().Done == 1 })
	if err := s.SetPause(ctx, ScopeWorker, r.hb.ID(), time.Now()); err != nil {
		t.Fatal(err)
	}
	due()
	r.waitFor("the worker to pause", func() bool { return w.Stats().Paused })
	// The read runs beside the loop: a claim under way when it ended
	// began before the pause, which holds for the claims after it.
	r.loopsPass("a claim loop after the pause")
	r.push("a")
	r.loopsPass("a claim loop after the push")
	if n := r.left("a"); n != 1 || w.Stats().Done != 1 {
		t.Fatalf("the paused worker ran a job: %d left on a, %d done", n, w.Stats().Done)
	}
	if err := s.ClearPause(ctx, ScopeWorker, r.hb.ID()); err != nil {
		t.Fatal(err)
	}
	due()
	r.waitFor("the resumed worker to run the job", func() bool { return r.left("a") == 0 })

	if err := s.SetPause(ctx, ScopeQueue, "b", time.Now()); err != nil {
		t.Fatal(err)
	}
	due()
	r.waitFor("queue b to pause", func() bool { return len(w.Stats().PausedQueues) == 1 })
	r.loopsPass("a claim loop after queue b's pause")
	r.push("b")
	r.push("a")
	r.waitFor("queue a to drain", func() bool { return r.left("a") == 0 })
	r.loopsPass("a claim loop after queue a drained")
	if n := r.left("b"); n != 1 {
		t.Fatalf("paused queue b was claimed: %d left", n)
	}
	if err := s.ClearPause(ctx, ScopeQueue, "b"); err != nil {
		t.Fatal(err)
	}
	due()
	r.waitFor("queue b to drain", func() bool { return r.left("b") == 0 })
}

func noopPayload(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/payloads/noop.json")
	if err != nil {
		t.Fatal(err)
	}
	uuid, err := payload.NewUUID()
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.Replace(string(raw), "173e75e8-08fd-47e9-95a7-a0c9c1c5f0b2", uuid, 1))
}

// TestEnsureMakesWhatIsMissing: Ensure makes laraworker's tables when one
// is missing (a worker's first start) and says which; on complete tables
// it does nothing.
func TestEnsureMakesWhatIsMissing(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		s, ctx := newStore(t, q), context.Background()
		if created, err := s.Ensure(ctx); err != nil || len(created) != 0 {
			t.Fatalf("complete tables: created %v, %v", created, err)
		}
		if _, err := q.DB().ExecContext(ctx, "drop table "+q.Dialect().Quote(s.Tables().Recent)); err != nil {
			t.Fatal(err)
		}
		if _, err := q.DB().ExecContext(ctx, "drop table "+q.Dialect().Quote(s.Tables().Workers)); err != nil {
			t.Fatal(err)
		}
		created, err := s.Ensure(ctx)
		if err != nil || strings.Join(created, ",") != s.Tables().Workers+","+s.Tables().Recent {
			t.Fatalf("created %v, %v; want the workers and recent tables", created, err)
		}
		if missing, old, err := s.MissingTables(ctx); err != nil || len(missing) != 0 || old {
			t.Errorf("after Ensure: missing %v, old columns %v, %v", missing, old, err)
		}
	})
}

// TestGivenBackCount: a worker's count of jobs given back to PHP round
// trips; on a workers table of an earlier version (no such column) rows
// are written and read without it, and Ensure (a worker's start) adds it.
func TestGivenBackCount(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		s, ctx := newStore(t, q), context.Background()
		w := WorkerRow{ID: "go:h:1:2", Kind: KindGo, Name: "n", Host: "h", PID: 1, StartedAt: 1, LastSeenAt: 2, Returned: 7}
		if err := s.UpsertWorker(ctx, w); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Workers(ctx); err != nil || len(got) != 1 || got[0].Returned != 7 {
			t.Fatalf("read back %+v, %v", got, err)
		}
		if _, err := q.DB().ExecContext(ctx, "alter table "+q.Dialect().Quote(s.Tables().Workers)+" drop column "+q.Dialect().Quote(returnedColumn)); err != nil {
			t.Fatal(err)
		}
		s.schema.forget()
		w.Returned = 9
		if err := s.UpsertWorker(ctx, w); err != nil {
			t.Fatalf("on the earlier table: %v", err)
		}
		if got, err := s.Workers(ctx); err != nil || len(got) != 1 || got[0].Returned != 0 {
			t.Fatalf("on the earlier table: %+v, %v", got, err)
		}
		if _, err := s.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.UpsertWorker(ctx, w); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Workers(ctx); err != nil || len(got) != 1 || got[0].Returned != 9 {
			t.Errorf("after Ensure: %+v, %v", got, err)
		}
	})
}
