package database

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// indexExists asks the engine's catalogue whether the jobs table has the
// named index.
func (e *testEnv) indexExists(t *testing.T, name string) bool {
	t.Helper()
	var query string
	switch e.engine {
	case appconfig.EngineMySQL:
		query = "select count(*) from information_schema.statistics where table_schema = database() and table_name = ? and index_name = ?"
	case appconfig.EnginePgSQL:
		query = "select count(*) from pg_indexes where tablename = $1 and indexname = $2"
	default:
		query = "select count(*) from sqlite_master where type = 'index' and tbl_name = ? and name = ?"
	}
	var n int
	if err := e.q.DB().QueryRowContext(e.ctx, query, e.cfg.JobsTable, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

func (e *testEnv) classColumnExists(t *testing.T) bool {
	t.Helper()
	var n int
	err := e.q.DB().QueryRowContext(e.ctx, "select count(*) from information_schema.columns where table_schema = database() and table_name = ? and column_name = ?",
		e.cfg.JobsTable, ClassColumn).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// createPreviousIndexes creates the indexes earlier versions' `tables
// --index` made, as they made them (and the class column on MySQL).
func (e *testEnv) createPreviousIndexes(t *testing.T) {
	t.Helper()
	st := e.q.st
	if e.engine == appconfig.EngineMySQL && !e.classColumnExists(t) {
		e.exec(t, st.CreateClaimIndex()[0]) // the column, unchanged since
	}
	cols := func(c ...string) string { return st.QuotedList(c) }
	prev := st.PreviousIndexNames()
	e.exec(t, st.CreateIndex(prev[0], cols("queue", "reserved_at", "available_at")))
	e.exec(t, st.CreateIndex(prev[1], st.Q("queue")+", "+st.ClassExpr()+st.ClassCollate()+", "+cols("reserved_at", "available_at", "id")))
	e.exec(t, st.CreateIndex(prev[2], cols("queue", "reserved_at", "available_at", "id")))
}

func (e *testEnv) createClaimIndex(t *testing.T) {
	t.Helper()
	if err := e.q.CreateClaimIndex(e.ctx); err != nil {
		t.Fatal(err)
	}
	if info, err := e.q.DetectClaimPath(e.ctx); err != nil || info.Path != ClaimPathIndexed {
		t.Fatalf("after CreateClaimIndex: %+v %v", info, err)
	}
}

func (e *testEnv) claimPath(t *testing.T) ClaimPath {
	t.Helper()
	info, err := e.q.DetectClaimPath(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.Path
}

func TestClaimIndex(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		names := []string{e.q.ClassIndexName(), e.q.ClaimIndexName()}
		if names[1] != e.cfg.JobsTable+"_laraworker_available_index" {
			t.Fatalf("index name %q", names[1])
		}
		if e.indexExists(t, names[0]) || e.indexExists(t, names[1]) || e.claimPath(t) != ClaimPathLaravel {
			t.Fatal("the claim index exists before it is asked for")
		}
		// The indexes of earlier versions are not taken for the claim
		// index, and CreateClaimIndex replaces them.
		e.createPreviousIndexes(t)
		if info, err := e.q.DetectClaimPath(e.ctx); err != nil || info.Path != ClaimPathLaravel || !info.PreviousIndex {
			t.Fatalf("the previous version's indexes: %+v %v", info, err)
		}
		for range 2 { // the second call finds it there
			if err := e.q.CreateClaimIndex(e.ctx); err != nil {
				t.Fatal(err)
			}
		}
		if !e.indexExists(t, names[0]) || !e.indexExists(t, names[1]) {
			t.Fatal("CreateClaimIndex made no index")
		}
		for _, n := range e.q.st.PreviousIndexNames() {
			if e.indexExists(t, n) {
				t.Fatalf("CreateClaimIndex left the previous version's %s", n)
			}
		}
		if e.claimPath(t) != ClaimPathIndexed {
			t.Fatal("the claim index is not detected")
		}
		if e.engine == appconfig.EngineMySQL && !e.classColumnExists(t) {
			t.Fatal("no class column")
		}
		// Laravel's insert (buildDatabaseRecord's columns) and select *
		// work with the index there.
		now := e.clock.Unix()
		id := e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
		e.insertRow(t, row{queue: "default", availableAt: now + 60, createdAt: now})
		if err := e.q.PushMany(e.ctx, []jobqueue.PushItem{{Payload: testPayload(newUUID(t), `App\Jobs\Bulk`), Delay: time.Minute}}); err != nil {
			t.Fatal(err)
		}
		jobs, err := e.q.Claim(e.ctx, nil, 10, jobqueue.ClaimOptions{})
		if err != nil || len(jobs) != 1 || jobs[0].ID != id {
			t.Fatalf("claim with the index: %+v %v", jobs, err)
		}
		e.createPreviousIndexes(t) // beside the new ones: the drop takes both
		for range 2 {
			if err := e.q.DropClaimIndex(e.ctx); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range append(names, e.q.st.PreviousIndexNames()...) {
			if e.indexExists(t, n) {
				t.Fatalf("DropClaimIndex left %s", n)
			}
		}
		if e.engine == appconfig.EngineMySQL && e.classColumnExists(t) {
			t.Fatal("DropClaimIndex left the class column")
		}
		if info, err := e.q.DetectClaimPath(e.ctx); err != nil || info.Path != ClaimPathLaravel || info.PreviousIndex {
			t.Fatalf("after the drop: %+v %v", info, err)
		}
		if !e.indexExists(t, sqldb.IndexName(e.cfg.JobsTable, "queue", "index")) {
			t.Fatal("Laravel's own queue index went away")
		}
	})
}

// TestIndexedClaimTakesWhatLaravelWould fills a table with every kind of
// row Laravel's claim must and must not take, and claims through the
// index.
func TestIndexedClaimTakesWhatLaravelWould(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.createClaimIndex(t)
		now := e.clock.Unix()
		expired := now - int64(e.cfg.RetryAfter) - 1
		ins := func(class string, r row) int64 {
			r.payload = testPayload(newUUID(t), class)
			if r.queue == "" {
				r.queue = "default"
			}
			if r.createdAt == 0 {
				r.createdAt = now
			}
			return e.insertRow(t, r)
		}
		goLate := ins(`App\Jobs\Go`, row{availableAt: now})      // lower id, available later
		goEarly := ins(`App\Jobs\Go`, row{availableAt: now - 5}) // first by availability
		goExpired := ins(`App\Jobs\Go`, row{availableAt: now - 600, attempts: 1, reservedAt: i64(expired)})
		ins(`App\Jobs\Go`, row{availableAt: now - 600, attempts: 1, reservedAt: i64(now - 10)}) // reserved, not expired
		ins(`App\Jobs\Go`, row{availableAt: now + 1})                                           // delayed
		ins(`App\Jobs\Go`, row{queue: "other", availableAt: now})                               // other queue
		excluded := ins(`App\Jobs\Go`, row{availableAt: now})                                   // given back to PHP
		lower := ins(`app\jobs\go`, row{availableAt: now})                                      // another case
		ins(`App\Jobs\Php`, row{availableAt: now - 10})                                         // another class
		ins(`App\Jobs\GoSlow`, row{availableAt: now})                                           // a name Go's is a prefix of
		other := ins(`App\Jobs\Other`, row{availableAt: now})

		opts := jobqueue.ClaimOptions{DisplayNames: []string{`App\Jobs\Go`}, ExcludeIDs: []int64{excluded}}
		jobs, err := e.q.Claim(e.ctx, nil, 10, opts)
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{goExpired, goEarly, goLate, lower} // expired first; then (available_at, id)
		if e.engine == appconfig.EnginePgSQL {
			want = want[:3] // case-sensitive, as PostgreSQL's LIKE is
		}
		if got := claimedIDs(jobs); !slices.Equal(got, want) {
			t.Fatalf("claimed %v, want %v", got, want)
		}
		for _, j := range jobs {
			stored := e.jobByID(t, j.ID)
			wantAttempts := 1
			if j.ID == goExpired {
				wantAttempts = 2
			}
			if stored.Attempts != wantAttempts || j.Attempts != wantAttempts || !ptrEq(stored.ReservedAt, i64(now)) || !ptrEq(j.ReservedAt, i64(now)) || j.Queue != "default" {
				t.Fatalf("job %d: returned %+v, stored %+v", j.ID, j, stored)
			}
		}
		// Several classes at once; a blocked class in the every-class mode.
		jobs, err = e.q.Claim(e.ctx, nil, 10, jobqueue.ClaimOptions{DisplayNames: []string{`App\Jobs\Other`, `App\Jobs\Nothing`}})
		if err != nil || !slices.Equal(ids(jobs), []int64{other}) {
			t.Fatalf("two classes: %v %v", ids(jobs), err)
		}
		jobs, err = e.q.Claim(e.ctx, nil, 10, jobqueue.ClaimOptions{ExcludeDisplayNames: []string{`App\Jobs\Php`, `App\Jobs\Go`}, ExcludeIDs: []int64{excluded}})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if c := string(j.Payload); strings.Contains(c, `Jobs\\Php"`) || strings.Contains(c, `"App\\Jobs\\Go"`) {
				t.Fatalf("a blocked class was claimed: %s", c)
			}
		}
		if e.engine == appconfig.EnginePgSQL && len(jobs) != 2 || e.engine != appconfig.EnginePgSQL && len(jobs) != 1 {
			t.Fatalf("every class but two: %d jobs (%v)", len(jobs), ids(jobs))
		}
	})
}

// claimedIDs are the jobs' ids in the order the claim returned them.
func claimedIDs(jobs []jobqueue.JobRow) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// TestDetectNoStatistics: a PostgreSQL jobs table never analysed is
// reported on Laravel's path (the worker then warns), not after ANALYZE,
// and not on the indexed path, whose plan does not depend on statistics.
func TestDetectNoStatistics(t *testing.T) {
	e := newEnv(t, appconfig.EnginePgSQL)
	info, err := e.q.DetectClaimPath(e.ctx)
	if err != nil || !info.NoStatistics || info.Path != ClaimPathLaravel {
		t.Fatalf("fresh table: %+v %v", info, err)
	}
	e.exec(t, "analyze "+e.quoted(e.cfg.JobsTable))
	if info, err := e.q.DetectClaimPath(e.ctx); err != nil || info.NoStatistics {
		t.Fatalf("after ANALYZE: %+v %v", info, err)
	}
	e2 := newEnv(t, appconfig.EnginePgSQL)
	e2.createClaimIndex(t)
	if info, err := e2.q.DetectClaimPath(e2.ctx); err != nil || info.NoStatistics || info.Path != ClaimPathIndexed {
		t.Fatalf("with the claim index: %+v %v", info, err)
	}
}

// TestClaimAfterIndexDroppedElsewhere: the claim index dropped while a
// worker uses it (another process ran --drop-index) costs no claim.
func TestClaimAfterIndexDroppedElsewhere(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.createClaimIndex(t)
		for _, stmt := range e.q.st.DropClaimIndex() {
			if _, err := e.q.db.ExecContext(e.ctx, stmt); err != nil && !isMySQLError(err, 1091) {
				t.Fatal(err)
			}
		}
		now := e.clock.Unix()
		id := e.insertRow(t, row{queue: "default", payload: testPayload(newUUID(t), `App\Jobs\Go`), availableAt: now, createdAt: now})
		jobs, err := e.q.Claim(e.ctx, nil, 10, jobqueue.ClaimOptions{DisplayNames: []string{`App\Jobs\Go`}})
		if err != nil || len(jobs) != 1 || jobs[0].ID != id {
			t.Fatalf("claim after the drop: %+v %v", claimedIDs(jobs), err)
		}
	})
}

// TestLongJobsTableName: a jobs table whose name, with an index suffix,
// passes the server's identifier limit still starts (the worker looks for
// the claim index at start-up), and creating the claim index is refused
// with the cause rather than made under names the server would cut (on
// PostgreSQL both indexes would get one name).
func TestLongJobsTableName(t *testing.T) {
	for _, engine := range allEngines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			cfg := engineConfig(t, engine, t.TempDir())
			cfg.JobsTable = "jobs_" + strings.Repeat("x", 50-len(cfg.JobsTable)) + cfg.JobsTable[len("jobs_"):]
			e := openEnv(t, engine, cfg, Options{})
			if got := e.claimPath(t); got != ClaimPathLaravel {
				t.Fatalf("claim path %q on a new table", got)
			}
			if engine == appconfig.EngineSQLite {
				return // no limit on names
			}
			err := e.q.CreateClaimIndex(e.ctx)
			if err == nil || !strings.Contains(err.Error(), "too long for the claim index") {
				t.Fatalf("CreateClaimIndex with names over the limit: %v", err)
			}
			if got := e.claimPath(t); got != ClaimPathLaravel {
				t.Fatalf("claim path %q after the refused index", got)
			}
		})
	}
}
