package laravel

import (
	"testing"
)

// indexExists asks the engine's catalogue whether the jobs table has the
// named index.
func (e *testEnv) indexExists(t *testing.T, name string) bool {
	t.Helper()
	var query string
	switch e.engine {
	case EngineMySQL:
		query = "select count(*) from information_schema.statistics where table_schema = database() and table_name = ? and index_name = ?"
	case EnginePgSQL:
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

func TestClaimIndex(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		name := e.q.ClaimIndexName()
		if want := e.cfg.JobsTable + "_queue_reserved_at_available_at_index"; name != want {
			t.Fatalf("index name %q, want Laravel's %q", name, want)
		}
		if e.indexExists(t, name) {
			t.Fatal("the composite index exists before it is asked for")
		}
		for range 2 { // the second call finds it there
			if err := e.q.CreateClaimIndex(e.ctx); err != nil {
				t.Fatal(err)
			}
		}
		if !e.indexExists(t, name) {
			t.Fatal("CreateClaimIndex made no index")
		}
		now := e.clock.Unix()
		id := e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
		e.insertRow(t, row{queue: "default", availableAt: now + 60, createdAt: now})
		jobs, err := e.q.Claim(e.ctx, nil, 10, ClaimOptions{})
		if err != nil || len(jobs) != 1 || jobs[0].ID != id {
			t.Fatalf("claim with the index: %+v %v", jobs, err)
		}
		for range 2 {
			if err := e.q.DropClaimIndex(e.ctx); err != nil {
				t.Fatal(err)
			}
		}
		if e.indexExists(t, name) {
			t.Fatal("DropClaimIndex left the index")
		}
		if !e.indexExists(t, indexName(e.cfg.JobsTable, "queue", "index")) {
			t.Fatal("Laravel's own queue index went away")
		}
	})
}
