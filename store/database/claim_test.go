package database

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

func TestClaimChoosesLaravelsRow(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		ra := int64(e.cfg.RetryAfter)
		reservedFresh := e.insertRow(t, row{queue: "default", attempts: 1, reservedAt: i64(now - ra + 1), availableAt: now - 500, createdAt: now - 500})
		delayed := e.insertRow(t, row{queue: "default", availableAt: now + 1, createdAt: now})
		otherQueue := e.insertRow(t, row{queue: "other", availableAt: now - 10, createdAt: now - 10})
		// Expired reservation with a future available_at: the expired branch
		// ignores available_at, as in Laravel.
		expired := e.insertRow(t, row{queue: "default", attempts: 3, reservedAt: i64(now - ra), availableAt: now + 1000, createdAt: now - 1000})
		readyNow := e.insertRow(t, row{queue: "default", attempts: 0, availableAt: now, createdAt: now - 1})

		j, err := e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
		if err != nil || j == nil {
			t.Fatalf("claim: %v %v", j, err)
		}
		if j.ID != expired || j.Attempts != 4 || !ptrEq(j.ReservedAt, i64(now)) || j.Queue != "default" {
			t.Fatalf("first claim got id=%d attempts=%d reserved=%s; want expired row %d with attempts 4 reserved %d", j.ID, j.Attempts, fmtPtr(j.ReservedAt), expired, now)
		}
		db := e.jobByID(t, expired)
		if db.Attempts != 4 || !ptrEq(db.ReservedAt, i64(now)) || db.AvailableAt != now+1000 || db.CreatedAt != now-1000 {
			t.Fatalf("expired row after claim: %+v", db)
		}

		j, err = e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
		if err != nil || j == nil || j.ID != readyNow || j.Attempts != 1 {
			t.Fatalf("second claim: %+v %v, want row %d attempts 1", j, err, readyNow)
		}
		j, err = e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
		if err != nil || j != nil {
			t.Fatalf("third claim should find nothing, got %+v %v", j, err)
		}
		// Untouched rows keep their exact values.
		if r := e.jobByID(t, reservedFresh); r.Attempts != 1 || !ptrEq(r.ReservedAt, i64(now-ra+1)) {
			t.Fatalf("fresh reservation changed: %+v", r)
		}
		if r := e.jobByID(t, delayed); r.Attempts != 0 || r.ReservedAt != nil {
			t.Fatalf("delayed row changed: %+v", r)
		}
		if r := e.jobByID(t, otherQueue); r.ReservedAt != nil {
			t.Fatalf("other queue row changed: %+v", r)
		}
		// One second later the delayed job is due and the fresh reservation
		// expires; the lower id wins.
		e.clock.Set(e.clock.Now().Add(1e9))
		j, err = e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
		if err != nil || j == nil || j.ID != reservedFresh || j.Attempts != 2 {
			t.Fatalf("claim after 1s: %+v %v, want %d", j, err, reservedFresh)
		}
		j, err = e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
		if err != nil || j == nil || j.ID != delayed {
			t.Fatalf("claim after 1s (2): %+v %v, want %d", j, err, delayed)
		}
		// An empty queue list means the default queue.
		e.insertRow(t, row{queue: "default", availableAt: now})
		if j, err := e.q.claimOne(e.ctx, nil, jobqueue.ClaimOptions{}); err != nil || j == nil {
			t.Fatalf("claim on default queue: %v %v", j, err)
		}
	})
}

func TestClaimBatch(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		var ids []int64
		for i := 0; i < 5; i++ {
			ids = append(ids, e.insertRow(t, row{queue: "default", attempts: i, availableAt: now - 1, createdAt: now - 1}))
		}
		e.insertRow(t, row{queue: "default", availableAt: now + 60, createdAt: now})
		jobs, err := e.q.Claim(e.ctx, []string{"default"}, 3, jobqueue.ClaimOptions{})
		if err != nil || len(jobs) != 3 {
			t.Fatalf("batch: %d jobs, %v", len(jobs), err)
		}
		for i, j := range jobs {
			if j.ID != ids[i] || j.Attempts != i+1 || !ptrEq(j.ReservedAt, i64(now)) {
				t.Fatalf("job %d: %+v", i, j)
			}
			db := e.jobByID(t, j.ID)
			if db.Attempts != i+1 || !ptrEq(db.ReservedAt, i64(now)) {
				t.Fatalf("db row %d: %+v", i, db)
			}
		}
		jobs, err = e.q.Claim(e.ctx, []string{"default"}, 3, jobqueue.ClaimOptions{})
		if err != nil || len(jobs) != 2 || jobs[0].ID != ids[3] || jobs[1].Attempts != 5 {
			t.Fatalf("second batch: %+v %v", jobs, err)
		}
		jobs, err = e.q.Claim(e.ctx, []string{"default"}, 3, jobqueue.ClaimOptions{})
		if err != nil || len(jobs) != 0 {
			t.Fatalf("third batch: %+v %v", jobs, err)
		}
	})
}

func TestClaimDisplayNameFilter(t *testing.T) {
	forEachEngine(t, testClaimDisplayNameFilter)
}

// TestClaimDisplayNameFilterIndexed: the claim index gives the same
// answers as the LIKE filter.
func TestClaimDisplayNameFilterIndexed(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.createClaimIndex(t)
		testClaimDisplayNameFilter(t, e)
	})
}

func testClaimDisplayNameFilter(t *testing.T, e *testEnv) {
	{
		now := e.clock.Unix()
		names := []string{
			`App\Jobs\FooBar`,        // Foo is a prefix of it
			`App\Jobs\Foo`,           //
			`App\Jobs\UnderXScore`,   // would match Under_Score if _ were a wildcard
			`App\Jobs\Under_Score`,   //
			`App\Jobs\Café`,          // non-ASCII, raw UTF-8 in the payload
			`Mail to a/b 100%`,       // custom displayName: / is \/ in JSON, % literal
			`App\Jobs\NoHandler`,     //
			`app\jobs\foo\Something`, //
		}
		ids := map[string]int64{}
		for _, n := range names {
			ids[n] = e.insertRow(t, row{queue: "default", payload: testPayload(newUUID(t), n), availableAt: now, createdAt: now})
		}
		// queue:retry re-encodes with \u escapes; the filter must still match.
		retried := []byte(`{"uuid":"` + newUUID(t) + `","displayName":"App\\Jobs\\Caf\u00e9","job":"x","data":{}}`)
		retriedID := e.insertRow(t, row{queue: "default", payload: retried, availableAt: now, createdAt: now})

		claimAll := func(filter ...string) []int64 {
			var got []int64
			for {
				j, err := e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{DisplayNames: filter})
				if err != nil {
					t.Fatal(err)
				}
				if j == nil {
					return got
				}
				got = append(got, j.ID)
			}
		}
		expect := func(got []int64, want ...int64) {
			t.Helper()
			sort.Slice(want, func(a, b int) bool { return want[a] < want[b] })
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("claimed %v, want %v", got, want)
			}
		}
		expect(claimAll(`App\Jobs\Foo`), ids[`App\Jobs\Foo`])
		expect(claimAll(`App\Jobs\Under_Score`), ids[`App\Jobs\Under_Score`])
		expect(claimAll(`App\Jobs\Café`), ids[`App\Jobs\Café`], retriedID)
		expect(claimAll(`Mail to a/b 100%`, `App\Jobs\FooBar`), ids[`App\Jobs\FooBar`], ids[`Mail to a/b 100%`])
		expect(claimAll(`App\Jobs\Missing`))
		// jobqueue.Batch claims honour the filter too.
		jobs, err := e.q.Claim(e.ctx, []string{"default"}, 10, jobqueue.ClaimOptions{DisplayNames: []string{`App\Jobs\UnderXScore`, `App\Jobs\NoHandler`}})
		if err != nil || len(jobs) != 2 || jobs[0].ID != ids[`App\Jobs\UnderXScore`] || jobs[1].ID != ids[`App\Jobs\NoHandler`] {
			t.Fatalf("batch filter: %+v %v", jobs, err)
		}
		// A name json_encode refuses (not UTF-8) cannot be in any payload:
		// claims with it fail clearly instead of matching something else.
		bad := jobqueue.ClaimOptions{DisplayNames: []string{`App\Jobs\Foo`, "App\\Jobs\\Caf\xe9"}}
		if f := renderFilter(bad.DisplayNames, nil); f.err == nil || f.patterns != nil || !strings.Contains(f.err.Error(), "Malformed UTF-8") {
			t.Fatalf("patterns of an invalid UTF-8 name: %q %v", f.patterns, f.err)
		}
		if n, err := e.q.CountClaimable(e.ctx, []string{"default"}, bad); err == nil || !strings.Contains(err.Error(), `display name "App\\Jobs\\Caf\xe9"`) {
			t.Fatalf("count with an invalid UTF-8 name: %d %v", n, err)
		}
		// Excluded classes are never claimed; the rest is.
		jobs, err = e.q.Claim(e.ctx, []string{"default"}, 10, jobqueue.ClaimOptions{ExcludeDisplayNames: []string{`app\jobs\foo\Something`}})
		if err != nil || len(jobs) != 0 {
			t.Fatalf("exclusion: claimed %+v %v, want nothing (the only job left is excluded)", jobs, err)
		}
		// A caller that writes another class into the slice it passed
		// before gets that class's jobs: the store's kept rendering of
		// the last filter is compared by content.
		reused := []string{`App\Jobs\Missing`}
		if j, err := e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{DisplayNames: reused}); j != nil || err != nil {
			t.Fatalf("claimed %+v %v for a class with no job", j, err)
		}
		reused[0] = `app\jobs\foo\Something`
		if j, err := e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{DisplayNames: reused}); j == nil || j.ID != ids[reused[0]] {
			t.Fatalf("after the slice changed: claimed %+v %v, want job %d of %s", j, err, ids[reused[0]], reused[0])
		}
		// Without a filter the rest is claimable: nothing is left.
		expect(claimAll())
	}
}

func TestClaimQueuePriority(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		low1 := e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
		high1 := e.insertRow(t, row{queue: "high", availableAt: now, createdAt: now})
		spaced := e.insertRow(t, row{queue: " default", availableAt: now, createdAt: now})
		high2 := e.insertRow(t, row{queue: "high", availableAt: now, createdAt: now})
		want := []struct {
			id    int64
			queue string
		}{{high1, "high"}, {high2, "high"}, {low1, "default"}}
		for i, w := range want {
			j, err := e.q.claimOne(e.ctx, []string{"high", "default"}, jobqueue.ClaimOptions{})
			if err != nil || j == nil || j.ID != w.id || j.Queue != w.queue {
				t.Fatalf("claim %d: %+v %v, want id %d on %s", i, j, err, w.id, w.queue)
			}
		}
		if j, err := e.q.claimOne(e.ctx, []string{"high", "default"}, jobqueue.ClaimOptions{}); j != nil || err != nil {
			t.Fatalf("names are not trimmed: %+v %v", j, err)
		}
		jobs, err := e.q.Claim(e.ctx, []string{"high", " default"}, 5, jobqueue.ClaimOptions{})
		if err != nil || len(jobs) != 1 || jobs[0].ID != spaced {
			t.Fatalf("batch priority: %+v %v", jobs, err)
		}
	})
}

// TestConcurrentClaimers: 8 workers, each with its own connection pool,
// claim 500 jobs (single and batch claims mixed); every job is claimed
// exactly once and its attempts column is 1.
func TestConcurrentClaimers(t *testing.T) {
	for _, engine := range allEngines {
		for _, indexed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/indexed=%v", engine, indexed), func(t *testing.T) {
				t.Parallel()
				testConcurrentClaimers(t, engine, indexed)
			})
		}
	}
}

// testConcurrentClaimers: 8 queues claim 500 jobs, single and batched;
// each job is claimed exactly once. With indexed, through the claim index
// and the class filter.
func testConcurrentClaimers(t *testing.T, engine string, indexed bool) {
	e := newEnv(t, engine)
	opts := jobqueue.ClaimOptions{}
	if indexed {
		e.createClaimIndex(t)
		opts.DisplayNames = []string{`App\Jobs\Test`}
	}
	const total, workers = 500, 8
	items := make([]jobqueue.PushItem, total)
	for i := range items {
		items[i] = jobqueue.PushItem{Queue: "default", Payload: testPayload(newUUID(t), `App\Jobs\Test`)}
	}
	if err := e.q.PushMany(e.ctx, items); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		claimed = map[int64]int{}
		wg      sync.WaitGroup
		errs    = make(chan error, workers)
	)
	for w := 0; w < workers; w++ {
		wq, err := Open(e.ctx, e.cfg, Options{Clock: e.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		if info, err := wq.DetectClaimPath(e.ctx); err != nil || (info.Path == ClaimPathIndexed) != indexed {
			t.Fatalf("claim path %+v %v", info, err)
		}
		defer wq.Close()
		wg.Add(1)
		go func(w int, wq *Queue) {
			defer wg.Done()
			for {
				var jobs []jobqueue.JobRow
				if w%2 == 0 {
					j, err := wq.claimOne(e.ctx, []string{"default"}, opts)
					if err != nil {
						errs <- err
						return
					}
					if j != nil {
						jobs = []jobqueue.JobRow{*j}
					}
				} else {
					var err error
					if jobs, err = wq.Claim(e.ctx, []string{"default"}, 7, opts); err != nil {
						errs <- err
						return
					}
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					claimed[j.ID]++
				}
				mu.Unlock()
			}
		}(w, wq)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("claimer error: %v", err)
	}
	if len(claimed) != total {
		t.Fatalf("claimed %d distinct jobs, want %d", len(claimed), total)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Fatalf("job %d claimed %d times", id, n)
		}
	}
	for _, j := range e.allJobs(t) {
		if j.Attempts != 1 || j.ReservedAt == nil {
			t.Fatalf("job %d: attempts %d reserved %s", j.ID, j.Attempts, fmtPtr(j.ReservedAt))
		}
	}
}

// TestClaimErrorOnAttemptsOverflow: a row whose attempts would overflow
// the column (tinyint unsigned on MySQL, smallint on PostgreSQL) makes a
// batch claim fail with a jobqueue.ClaimError naming that row, whichever path the
// claim takes (PostgreSQL's one statement cannot say which row: the
// transactional claim finds it), and nothing is reserved.
func TestClaimErrorOnAttemptsOverflow(t *testing.T) {
	for _, engine := range []string{appconfig.EngineMySQL, appconfig.EnginePgSQL} {
		for _, indexed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/indexed=%v", engine, indexed), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, engine)
				if indexed {
					e.createClaimIndex(t)
				}
				maxAttempts := map[string]int{appconfig.EngineMySQL: 255, appconfig.EnginePgSQL: 32767}[engine]
				now := e.clock.Unix()
				worn := e.insertRow(t, row{queue: "default", attempts: maxAttempts, availableAt: now, createdAt: now})
				e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
				jobs, err := e.q.Claim(e.ctx, nil, 10, jobqueue.ClaimOptions{DisplayNames: []string{`App\Jobs\Test`}})
				var ce *jobqueue.ClaimError
				if !errors.As(err, &ce) || ce.Job.ID != worn || len(jobs) != 0 {
					t.Fatalf("claim: %v %v", claimedIDs(jobs), err)
				}
				for _, j := range e.allJobs(t) {
					if j.ReservedAt != nil {
						t.Fatalf("row %d reserved after the failed claim", j.ID)
					}
				}
			})
		}
	}
}
