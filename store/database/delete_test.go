package database

import (
	"slices"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// TestDeleteManyPastOneStatement: 1,200 jobs of one claim, two of them
// reclaimed by another worker, deleted in one call: past the engines' id
// list chunk (several statements in one transaction on MySQL and SQLite,
// one array on PostgreSQL) every held row goes and exactly the two
// reclaimed ones are reported lost and left as the other worker has them.
func TestDeleteManyPastOneStatement(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		const n = 1200
		items := make([]jobqueue.PushItem, n)
		for i := range items {
			items[i] = jobqueue.PushItem{Payload: testPayload(newUUID(t), `App\Jobs\Test`)}
		}
		if err := e.q.PushMany(e.ctx, items); err != nil {
			t.Fatal(err)
		}
		jobs := claimAll(t, e, "default", n)
		reclaimed := []int64{jobs[10].ID, jobs[700].ID}
		for _, id := range reclaimed {
			e.reclaim(t, id)
		}
		lost, err := e.q.Delete(e.ctx, jobs)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(reclaimed)
		if got := ids(lost); !slices.Equal(got, reclaimed) {
			t.Fatalf("lost %v, want %v", got, reclaimed)
		}
		var left []int64
		for _, j := range e.allJobs(t) {
			left = append(left, j.ID)
			if j.Attempts != 2 {
				t.Errorf("row %d left with %d attempts, want the other worker's 2", j.ID, j.Attempts)
			}
		}
		if !slices.Equal(left, reclaimed) {
			t.Fatalf("rows left %v, want only the reclaimed %v", left, reclaimed)
		}
	})
}

// TestDeleteIsOneStatementOnPostgres: grouped deletes of 2, 3 and 4 jobs
// prepare one statement on the connection, not one per batch size (each
// new one costs a Parse round trip and a slot in pgx's statement cache);
// a delete of one job is the fenced delete of one row, which release,
// fail and finish prepare anyway: two in all.
func TestDeleteIsOneStatementOnPostgres(t *testing.T) {
	e := newEnv(t, appconfig.EnginePgSQL)
	e.q.db.SetMaxOpenConns(1) // every statement on the session inspected below
	now := e.clock.Unix()
	for range 10 {
		e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
	}
	for _, size := range []int{1, 2, 3, 4} {
		jobs := claimAll(t, e, "default", size)
		if lost, err := e.q.Delete(e.ctx, jobs); err != nil || len(lost) != 0 {
			t.Fatalf("delete %d: lost %v, %v", size, lost, err)
		}
	}
	if left := e.allJobs(t); len(left) != 0 {
		t.Fatalf("rows left: %+v", left)
	}
	var prepared int
	err := e.q.db.QueryRowContext(e.ctx, "select count(*) from pg_prepared_statements where statement like 'delete from %'").Scan(&prepared)
	if err != nil {
		t.Fatal(err)
	}
	if prepared != 2 {
		t.Fatalf("%d delete statements prepared for batches of 1, 2, 3 and 4 jobs, want 2 (one job's, every batch's)", prepared)
	}
}

// TestDeletePlanOnPostgresUsesThePrimaryKey: on a fresh table that has
// never been analysed (autovacuum off, as on these machines), the grouped
// delete's generic plan, the one a cached prepared statement ends up
// with, finds the rows by primary key, whatever the table holds.
func TestDeletePlanOnPostgresUsesThePrimaryKey(t *testing.T) {
	e := newEnv(t, appconfig.EnginePgSQL)
	items := make([]jobqueue.PushItem, 5000)
	for i := range items {
		items[i] = jobqueue.PushItem{Payload: testPayload(newUUID(t), `App\Jobs\Test`)}
	}
	if err := e.q.PushMany(e.ctx, items); err != nil {
		t.Fatal(err)
	}
	conn, err := e.q.db.Conn(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, stmt := range []string{
		"set plan_cache_mode = force_generic_plan",
		"prepare grouped_delete as " + e.q.st.DeleteReservedJobs(3),
	} {
		if _, err := conn.ExecContext(e.ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	defer conn.ExecContext(e.ctx, "deallocate grouped_delete")
	rows, err := conn.QueryContext(e.ctx, "explain execute grouped_delete(1, '{1,2,3}')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, e.cfg.JobsTable+"_pkey") || strings.Contains(text, "Seq Scan") {
		t.Fatalf("the grouped delete's generic plan does not go by the primary key:\n%s", text)
	}
}
