package database

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// TestMove: only unreserved rows of the named classes move, in batches;
// reserved rows, other classes, other queues and a class whose name only
// starts like a moved one stay; moved rows keep id, attempts, available_at
// and payload bytes.
func TestMove(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		moved := `App\Jobs\Heavy`
		type kept struct {
			id    int64
			queue string
		}
		var wantMoved []int64
		var stays []kept
		for i := 0; i < moveBatch+30; i++ { // more than one batch
			id := e.insertRow(t, row{queue: "default", payload: testPayload(newUUID(t), moved), attempts: i % 3, availableAt: now + int64(i%2)*3600, createdAt: now})
			wantMoved = append(wantMoved, id)
			if i%50 == 0 { // interleave rows that must stay
				stays = append(stays,
					kept{e.insertRow(t, row{queue: "default", payload: testPayload(newUUID(t), `App\Jobs\Light`), availableAt: now, createdAt: now}), "default"},
					kept{e.insertRow(t, row{queue: "default", payload: testPayload(newUUID(t), moved+"Plus"), availableAt: now, createdAt: now}), "default"},
					kept{e.insertRow(t, row{queue: "default", payload: testPayload(newUUID(t), moved), reservedAt: i64(now - 5), attempts: 1, availableAt: now, createdAt: now}), "default"},
					kept{e.insertRow(t, row{queue: "other", payload: testPayload(newUUID(t), moved), availableAt: now, createdAt: now}), "other"},
				)
			}
		}
		before := map[int64]jobqueue.JobRow{}
		for _, j := range e.allJobs(t) {
			before[j.ID] = j
		}
		counts, err := e.q.CountClasses(e.ctx, "default", []string{moved, `App\Jobs\Light`, `App\Jobs\Absent`})
		if err != nil {
			t.Fatal(err)
		}
		if counts[0].Unreserved != int64(len(wantMoved)) || counts[0].Reserved != int64((moveBatch+30+49)/50) || counts[1].Unreserved != int64(len(stays)/4) || counts[2] != (jobqueue.ClassCount{Class: `App\Jobs\Absent`}) {
			t.Fatalf("counts before: %+v", counts)
		}

		n, err := e.q.Move(e.ctx, "default", "go", []string{moved})
		if err != nil {
			t.Fatal(err)
		}
		if n[moved] != int64(len(wantMoved)) || len(n) != 1 {
			t.Fatalf("moved %v, want %d", n, len(wantMoved))
		}
		after := map[int64]jobqueue.JobRow{}
		for _, j := range e.allJobs(t) {
			after[j.ID] = j
		}
		for _, id := range wantMoved {
			b, a := before[id], after[id]
			if a.Queue != "go" || a.Attempts != b.Attempts || a.AvailableAt != b.AvailableAt || a.ReservedAt != nil || !bytes.Equal(a.Payload, b.Payload) {
				t.Fatalf("row %d moved as %+v, was %+v", id, a, b)
			}
		}
		for _, k := range stays {
			if after[k.id].Queue != k.queue || !ptrEq(after[k.id].ReservedAt, before[k.id].ReservedAt) {
				t.Errorf("row %d (%+v) must stay on %s", k.id, after[k.id], k.queue)
			}
		}
		if n, err := e.q.Move(e.ctx, "default", "go", []string{moved}); err != nil || n[moved] != 0 {
			t.Errorf("second move: %v %v", n, err)
		}
		if _, err := e.q.Move(e.ctx, "go", "go", []string{moved}); err == nil {
			t.Error("moving a queue onto itself must be an error")
		}
	})
}

// TestMoveSkipsRowsReservedMeanwhile: the update's own condition leaves a
// row reserved between the candidate read and the update.
func TestMoveSkipsRowsReservedMeanwhile(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		id := e.insertRow(t, row{queue: "default", payload: testPayload(newUUID(t), `App\Jobs\Heavy`), availableAt: now, createdAt: now})
		pats, err := likePatterns([]string{`App\Jobs\Heavy`})
		if err != nil {
			t.Fatal(err)
		}
		ids, _, err := e.q.moveCandidates(e.ctx, "default", pats, map[string]bool{`App\Jobs\Heavy`: true}, 0)
		if err != nil || len(ids[`App\Jobs\Heavy`]) != 1 {
			t.Fatalf("candidates %v %v", ids, err)
		}
		claimOne(t, e, "default") // a worker reserves it now
		res, err := e.q.db.ExecContext(e.ctx, e.q.st.MoveJobs(1), "go", "default", id)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 0 {
			t.Fatalf("the update moved a reserved row")
		}
		if j := e.jobByID(t, id); j.Queue != "default" || j.ReservedAt == nil {
			t.Fatalf("row %+v", j)
		}
	})
}

// TestMissingTablesAndClassSample covers the startup checks' queries.
func TestMissingTablesAndClassSample(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		if m, err := e.q.MissingTables(e.ctx); err != nil || len(m) != 0 {
			t.Fatalf("missing %v %v", m, err)
		}
		e.exec(t, "drop table "+e.quoted(e.cfg.BatchesTable))
		e.exec(t, "drop table "+e.quoted(e.cfg.FailedTable))
		m, err := e.q.MissingTables(e.ctx)
		if err != nil || len(m) != 2 || m[0].Role != "failed_jobs" || m[1].Role != "job_batches" || m[1].Artisan != "queue:batches-table" {
			t.Fatalf("missing %+v %v", m, err)
		}
		if err := e.q.CreateTables(e.ctx); err != nil {
			t.Fatal(err)
		}
		now := e.clock.Unix()
		for i, c := range []string{`App\Jobs\A`, `App\Jobs\B`, `App\Jobs\A`, `App\Jobs\C`} {
			q := "default"
			if i == 3 {
				q = "elsewhere"
			}
			e.insertRow(t, row{queue: q, payload: testPayload(newUUID(t), c), availableAt: now, createdAt: now})
		}
		got, read, err := e.q.ClassesOnQueues(e.ctx, []string{"default", "high"}, 2)
		if err != nil || read != 2 || got[`App\Jobs\A`] != 1 || got[`App\Jobs\B`] != 1 {
			t.Fatalf("sample of 2: %v %d %v", got, read, err)
		}
		got, read, err = e.q.ClassesOnQueues(e.ctx, []string{"default"}, 100)
		if err != nil || read != 3 || len(got) != 2 || SortedClasses(got)[0] != `App\Jobs\A` {
			t.Fatalf("sample: %v %d %v", got, read, err)
		}
	})
}

// TestClassSampleReadsPrefixes: a job of 10 MB costs the class sample
// what a small one does: only the first bytes of each payload are read
// (on SQLite, not even those: see SamplePayloads).
// Not parallel, so that the allocations measured are the sample's.
func TestClassSampleReadsPrefixes(t *testing.T) {
	for _, engine := range allEngines {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine)
			now := e.clock.Unix()
			big := strings.Replace(string(testPayload(newUUID(t), `App\Jobs\Big`)), `"data":{`, `"pad":"`+strings.Repeat("x", 10<<20)+`","data":{`, 1)
			e.insertRow(t, row{queue: "default", payload: testPayload(newUUID(t), `App\Jobs\A`), availableAt: now, createdAt: now})
			e.insertRow(t, row{queue: "default", payload: []byte(big), availableAt: now, createdAt: now})
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got, read, err := e.q.ClassesOnQueues(e.ctx, []string{"default"}, 100)
			runtime.ReadMemStats(&after)
			// SQLite, in the worker's process, would load the whole value
			// for substr(): a payload over SampleWhole is read as unknown.
			wantBig := int64(1)
			if engine == appconfig.EngineSQLite {
				wantBig = 0
			}
			if err != nil || read != 2 || got[`App\Jobs\Big`] != wantBig || got[`App\Jobs\A`] != 1 {
				t.Fatalf("sample with a big job: %v %d %v", got, read, err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Fatalf("the sample allocated %d bytes with a job of 10 MB on the queue", alloc)
			}
		})
	}
}

// TestMissingCacheTable: an app whose cache store is database needs the
// cache table (queue:restart, maxExceptions); the startup check names it
// with the artisan command that makes it.
func TestMissingCacheTable(t *testing.T) {
	for _, engine := range allEngines {
		t.Run(engine, func(t *testing.T) {
			cfg := engineConfig(t, engine, t.TempDir())
			cfg.CacheStore, cfg.CacheTable, cfg.CachePrefix = "database", "cache_"+testdsn.Suffix(t), "laravel_cache"
			e := openEnv(t, engine, cfg, Options{})
			m, err := e.q.MissingTables(e.ctx)
			if err != nil || len(m) != 1 || m[0].Role != "cache" || m[0].Table != cfg.CacheTable {
				t.Fatalf("missing %+v %v", m, err)
			}
			if s := m[0].String(); !strings.Contains(s, "cache:table") || strings.Contains(s, "laraworker tables") {
				t.Fatalf("message %q", s)
			}
			createCacheTable(t, e.q)
			if m, err := e.q.MissingTables(e.ctx); err != nil || len(m) != 0 {
				t.Fatalf("after cache:table: %+v %v", m, err)
			}
		})
	}
}
