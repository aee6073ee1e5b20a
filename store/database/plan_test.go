package database

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database/internal/sqlstmt"
)

// TestIndexedClaimPlans pins the indexed claim's plans on a fresh table
// that was never analysed (PostgreSQL's autovacuum is off on the test
// servers) and holds what made Laravel's query slow: 20,000 rows of a
// class the worker does not take and 5,000 delayed rows of the one it
// does, older than its few ready rows. The plans must read the class's
// ready rows through the index in claim order: no full scan, no bitmap
// scan, no sort (except across several classes, where the ready rows of
// those classes are sorted).
//
// LARAWORKER_PLAN_SCALE=k multiplies the backlog by k (40: 1,000,000
// rows), to see the plans stay ranges as the table grows
// (docs/PERFORMANCE.md, "How cost grows"); CI runs k=1.
func TestIndexedClaimPlans(t *testing.T) {
	scale := 1
	if v := os.Getenv("LARAWORKER_PLAN_SCALE"); v != "" {
		var err error
		if scale, err = strconv.Atoi(v); err != nil || scale < 1 {
			t.Fatalf("LARAWORKER_PLAN_SCALE=%q: want a positive integer", v)
		}
	}
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		if scale > 1 { // the load and the index take longer than the usual test's 2 minutes
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(scale)*time.Minute)
			defer cancel()
			e.ctx = ctx
		}
		e.fillBacklog(t, 20_000*scale, 5_000*scale, 50)
		e.createClaimIndex(t)
		cases := []struct {
			name string
			opts jobqueue.ClaimOptions
			sort bool // several classes: a sort of their ready rows is expected
		}{
			{"one class", jobqueue.ClaimOptions{DisplayNames: []string{`App\Jobs\Go`}, ExcludeIDs: []int64{1, 2}}, false},
			{"every class but one", jobqueue.ClaimOptions{ExcludeDisplayNames: []string{`App\Jobs\Broken`}, ExcludeIDs: []int64{3}}, false},
			{"two classes", jobqueue.ClaimOptions{DisplayNames: []string{`App\Jobs\Go`, `App\Jobs\Other`}}, true},
		}
		for _, analysed := range []bool{false, true} {
			if analysed { // and the same plans once the table has statistics
				e.exec(t, map[string]string{appconfig.EngineMySQL: "analyze table ", appconfig.EnginePgSQL: "analyze ", appconfig.EngineSQLite: "analyze "}[e.engine]+e.quoted(e.cfg.JobsTable))
			}
			for _, c := range cases {
				query, args := e.q.indexedStatement("default", 16, c.opts)
				plan := e.explain(t, query, args(e.clock.Unix()))
				wantIndex := e.q.ClassIndexName()
				if len(c.opts.DisplayNames) == 0 {
					wantIndex = e.q.ClaimIndexName()
				}
				if err := checkPlan(e.engine, plan, e.cfg.JobsTable, wantIndex, c.sort); err != nil {
					t.Errorf("%s (analysed: %v): %v\nplan:\n%s", c.name, analysed, err, plan)
				}
				if e.engine == appconfig.EngineMySQL { // the range's key parts are in the JSON form only
					plan = e.explainJSON(t, query, args(e.clock.Unix()))
				}
				if err := checkRange(e.engine, plan, len(c.opts.DisplayNames) > 0); err != nil {
					t.Errorf("%s (analysed: %v): %v\nplan:\n%s", c.name, analysed, err, plan)
				}
			}
		}
		// The claims themselves take the right rows from that table.
		jobs, err := e.q.Claim(e.ctx, nil, 100, jobqueue.ClaimOptions{DisplayNames: []string{`App\Jobs\Go`}})
		if err != nil || len(jobs) != 50 {
			t.Fatalf("claimed %d jobs (%v), want the 50 ready ones", len(jobs), err)
		}
	})
}

// fillBacklog inserts php rows of a PHP-only class, then delayed and ready
// rows of App\Jobs\Go, on the default queue.
func (e *testEnv) fillBacklog(t testing.TB, php, delayed, ready int) {
	t.Helper()
	var items []jobqueue.PushItem
	add := func(n int, class string, delay time.Duration) {
		for range n {
			items = append(items, jobqueue.PushItem{Payload: testPayload(newUUID(t), class), Delay: delay})
		}
	}
	add(php, `App\Jobs\Php`, 0)
	add(delayed, `App\Jobs\Go`, time.Hour)
	add(ready, `App\Jobs\Go`, 0)
	for start := 0; start < len(items); start += 2000 {
		if err := e.q.PushMany(e.ctx, items[start:min(start+2000, len(items))]); err != nil {
			t.Fatal(err)
		}
	}
}

// explain returns the engine's plan of query as text, one line per row.
func (e *testEnv) explain(t *testing.T, query string, args []any) string {
	t.Helper()
	prefix := map[string]string{appconfig.EngineMySQL: "explain ", appconfig.EnginePgSQL: "explain (costs off) ", appconfig.EngineSQLite: "explain query plan "}[e.engine]
	rows, err := e.q.db.QueryContext(e.ctx, prefix+query, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			fmt.Fprintf(&out, "%s=%v ", cols[i], v)
		}
		out.WriteString("\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// explainJSON is MySQL's plan as JSON.
func (e *testEnv) explainJSON(t *testing.T, query string, args []any) string {
	t.Helper()
	var plan string
	if err := e.q.db.QueryRowContext(e.ctx, "explain format=json "+query, args...).Scan(&plan); err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	return plan
}

// checkRange: the index is read as a range that ends at available_at <=
// now (delayed rows are never read) and, for a claim of classes, starts
// at the class (other classes' rows are never read), not filtered row by
// row.
func checkRange(engine, plan string, class bool) error {
	var want []string
	switch engine {
	case appconfig.EngineMySQL:
		parts := `"used_key_parts": ["queue", "available_at"`
		if class {
			parts = `"used_key_parts": ["queue", "` + ClassColumn + `", "available_at"`
		}
		want = []string{parts}
	case appconfig.EnginePgSQL:
		want = []string{"Index Cond: (((queue)::text = ", "available_at <= "}
		if class {
			want = append(want, "->> 'displayName'::text) = ")
		}
	default:
		want = []string{"(queue=? AND available_at<?)"}
		if class {
			want = []string{"(queue=? AND <expr>=? AND available_at<?)"}
		}
	}
	for _, w := range want {
		if !strings.Contains(plan, w) {
			return fmt.Errorf("the index range does not have %q", w)
		}
	}
	if engine == appconfig.EnginePgSQL {
		// The class and the time are in the index condition, not a filter.
		for _, line := range strings.Split(plan, "\n") {
			if strings.Contains(line, "Filter:") && (strings.Contains(line, "available_at <=") ||
				class && strings.Contains(line, "->> 'displayName'::text) = ")) {
				return fmt.Errorf("filtered row by row: %s", line)
			}
		}
	}
	return nil
}

// checkPlan reads each engine's plan text for the signs of a plan that
// depends on the table's size.
func checkPlan(engine, plan, table, index string, sortAllowed bool) error {
	if !strings.Contains(plan, index) {
		return fmt.Errorf("index %s not used", index)
	}
	var bad []string
	switch engine {
	case appconfig.EngineMySQL:
		bad = []string{"type=ALL", "type=index "}
		if !sortAllowed {
			bad = append(bad, "filesort")
		}
		for _, line := range strings.Split(strings.TrimSpace(plan), "\n") {
			if strings.Contains(line, "table=<union") {
				continue
			}
			if !strings.Contains(line, "key="+index) {
				return fmt.Errorf("a branch does not use %s: %s", index, line)
			}
		}
	case appconfig.EnginePgSQL:
		bad = []string{"Seq Scan", "Bitmap"}
		if !sortAllowed {
			bad = append(bad, "Sort")
		}
	default:
		bad = []string{"SCAN " + table}
		if !sortAllowed {
			bad = append(bad, "TEMP B-TREE")
		}
	}
	for _, b := range bad {
		if strings.Contains(plan, b) {
			return fmt.Errorf("plan has %q", b)
		}
	}
	return nil
}

// TestLaravelClaimPlanWithoutStatistics: on a PostgreSQL jobs table that
// was never analysed, Laravel's claim (the one-statement batch and the
// transaction's select) reads the primary key in order on the queue's own
// sessions (sqldb turns sorting off for them), instead of a bitmap scan
// of the queue index and a sort of every ready row. Once the table has
// statistics, new sessions leave the plan to PostgreSQL.
func TestLaravelClaimPlanWithoutStatistics(t *testing.T) {
	e := newEnv(t, appconfig.EnginePgSQL)
	e.fillBacklog(t, 0, 0, 10_000)
	now := e.clock.Unix()
	pkey := sqldb.LastPart(e.cfg.JobsTable) + "_pkey"
	statements := map[string]struct {
		query string
		args  []any
	}{
		"one statement": {e.q.st.ClaimUpdateLaravel(sqlstmt.ClaimFilter{IDArray: true}), []any{"default", now, now - 90, 16, now}},
		"transaction":   {e.q.st.ClaimSelectFiltered(1, sqlstmt.ClaimFilter{}), []any{"default", now, now - 90}},
	}
	for name, s := range statements {
		plan := e.explain(t, s.query, s.args)
		if !strings.Contains(plan, "Index Scan using "+pkey) || strings.Contains(plan, "Sort") || strings.Contains(plan, "Bitmap") {
			t.Errorf("%s: the claim does not read %s in order:\n%s", name, pkey, plan)
		}
	}
	e.exec(t, "analyze "+e.quoted(e.cfg.JobsTable))
	again, err := Open(e.ctx, e.cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	var sort string
	if err := again.db.QueryRowContext(e.ctx, "show enable_sort").Scan(&sort); err != nil || sort != "on" {
		t.Errorf("enable_sort on a session opened after ANALYZE = %q (%v), want on", sort, err)
	}
}
