package database

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database/internal/sqlstmt"
)

// copyRow inserts n (< 1,000,000) copies of row id (new ids above every
// existing one) in one statement; MariaDB stops a recursion at 1,000
// steps by default.
func (e *testEnv) copyRow(t *testing.T, id int64, n int) {
	t.Helper()
	cols := "queue, payload, attempts, reserved_at, available_at, created_at"
	var sel []string
	for _, c := range strings.Split(cols, ", ") {
		sel = append(sel, e.quoted("j")+"."+e.quoted(c))
	}
	var quoted []string
	for _, c := range strings.Split(cols, ", ") {
		quoted = append(quoted, e.quoted(c))
	}
	e.exec(t, fmt.Sprintf("insert into %s (%s) select %s from %s %s cross join "+
		"(with recursive n(i) as (select 0 union all select i + 1 from n where i < 999) "+
		"select a.i * 1000 + b.i as i from n a cross join n b where a.i * 1000 + b.i < %d) x where %s.%s = %d order by x.i",
		e.quoted(e.cfg.JobsTable), strings.Join(quoted, ", "), strings.Join(sel, ", "),
		e.quoted(e.cfg.JobsTable), e.quoted("j"), n, e.quoted("j"), e.quoted("id"), id))
}

// delayedThenReady inserts 12,000 rows on the default queue that are due
// a minute after now, then n ready ones above them: a claim from the start
// reads the delayed rows first. It returns the first delayed row's id and
// the ready ids.
func (e *testEnv) delayedThenReady(t *testing.T, now int64, n int) (first int64, ready []int64) {
	t.Helper()
	first = e.insertRow(t, row{queue: "default", availableAt: now + 60, createdAt: now})
	e.copyRow(t, first, 11_999)
	for range n {
		ready = append(ready, e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now}))
	}
	return first, ready
}

// everyClaimMeasured makes every claim from the start count as slow, so
// that the cost measurement does not depend on the machine's speed.
func everyClaimMeasured(q *Queue) {
	q.scan.slow = 0
}

// claimIDs claims n and returns the ids taken.
func (e *testEnv) claimIDs(t *testing.T, n int) []int64 {
	t.Helper()
	jobs, err := e.q.Claim(e.ctx, nil, n, jobqueue.ClaimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

func (e *testEnv) bound() *scanBound {
	e.q.scan.mu.Lock()
	defer e.q.scan.mu.Unlock()
	if s := e.q.scan.m[boundKey{queue: "default", filter: "\x00"}]; s != nil {
		c := *s
		return &c
	}
	return nil
}

// Issue 24 goal 5: 50,000 delayed rows ahead of the ready ones make a
// claim with Laravel's query read thousands of rows per row it takes. The
// worker is told once, with the figures; the same rows behind the ready
// ones (the control) tell nothing.
func TestClaimCostReportedOnce(t *testing.T) {
	for _, delayedFirst := range []bool{true, false} {
		name := "delayed rows ahead"
		if !delayedFirst {
			name = "delayed rows behind (control)"
		}
		t.Run(name, func(t *testing.T) {
			forEachEngine(t, func(t *testing.T, e *testEnv) {
				everyClaimMeasured(e.q)
				var mu sync.Mutex
				var reports []ClaimCost
				e.q.OnCostlyClaims(func(c ClaimCost) {
					mu.Lock()
					reports = append(reports, c)
					mu.Unlock()
				})
				now := e.clock.Unix()
				delayed := func() {
					id := e.insertRow(t, row{queue: "default", availableAt: now + 3600, createdAt: now})
					e.copyRow(t, id, 49_999)
				}
				if delayedFirst {
					delayed()
				}
				for range 20 {
					e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
				}
				if !delayedFirst {
					delayed()
				}
				claimed := 0
				for range 10 {
					claimed += len(e.claimIDs(t, 5))
				}
				if claimed != 20 {
					t.Fatalf("claimed %d jobs, want the 20 ready ones", claimed)
				}
				b := e.bound()
				if b == nil || b.checkAt.IsZero() {
					t.Fatal("no claim was measured")
				}
				mu.Lock()
				defer mu.Unlock()
				if !delayedFirst {
					if len(reports) != 0 || b.costly {
						t.Fatalf("reported %+v (costly %v) with the delayed rows behind the ready ones", reports, b.costly)
					}
					return
				}
				if len(reports) != 1 {
					t.Fatalf("reported %d times, want once: %+v", len(reports), reports)
				}
				c := reports[0]
				if c.RowsRead < 50_000 || c.Claimed != 5 || c.Queue != "default" || c.Took <= 0 {
					t.Fatalf("report %+v, want >= 50,000 rows read for 5 claimed on default", c)
				}
				if msg := c.String(); !strings.Contains(msg, "laraworker tables --index") || !strings.Contains(msg, "rows for each of the 5 jobs") {
					t.Fatalf("message %q", msg)
				}
			})
		})
	}
}

// On MySQL/MariaDB a costly queue's claims from the start read the
// primary key in id order when the queue holds at least half of the
// table's rows (MariaDB's own plan, the queue index with a lookup per
// row, costs about four times as much per row), and keep the plan MariaDB
// picks when other queues fill the table (the primary key would read
// every row of theirs ahead).
func TestClaimsFromTheStartAlongThePrimaryKey(t *testing.T) {
	for _, others := range []int{0, 30_000} {
		t.Run(fmt.Sprintf("%d rows of another queue", others), func(t *testing.T) {
			forEachEngine(t, func(t *testing.T, e *testEnv) {
				everyClaimMeasured(e.q)
				now := e.clock.Unix()
				if others > 0 {
					id := e.insertRow(t, row{queue: "other", availableAt: now, createdAt: now})
					e.copyRow(t, id, others-1)
				}
				_, ready := e.delayedThenReady(t, now, 10)
				jobs, err := e.q.Claim(e.ctx, nil, 5, jobqueue.ClaimOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(jobs) != 5 || jobs[0].ID != ready[0] || jobs[4].ID != ready[4] {
					t.Fatalf("first claim took %+v, want %v", jobs, ready[:5])
				}
				b := e.bound()
				if b == nil || !b.costly {
					t.Fatalf("bound %+v, want the queue measured costly", b)
				}
				want := e.engine == appconfig.EngineMySQL && others == 0
				if b.primary != want {
					t.Fatalf("claims from the start along the primary key: %v, want %v", b.primary, want)
				}
				// A claim from the start (Unreserve forgets the bound) takes
				// Laravel's next rows.
				if err := e.q.Unreserve(e.ctx, jobs[0]); err != nil {
					t.Fatal(err)
				}
				if got := e.claimIDs(t, 3); !slices.Equal(got, []int64{ready[0], ready[5], ready[6]}) {
					t.Fatalf("claim from the start took %v, want %v", got, []int64{ready[0], ready[5], ready[6]})
				}
				if e.engine != appconfig.EngineMySQL {
					return
				}
				query := e.q.st.ClaimSelectFiltered(10, sqlstmt.ClaimFilter{Primary: true})
				plan := e.explain(t, query, []any{"default", now, now - 90})
				if !strings.Contains(plan, "key=PRIMARY") || strings.Contains(plan, "filesort") {
					t.Fatalf("the claim along the primary key is planned as\n%s", plan)
				}
			})
		})
	}
}

// With the bound on ids in use, Laravel's claimable rows are all taken:
// delayed rows below the bound once due, an expired reservation below it,
// a row due soon below it when the rows above run out.
func TestClaimBoundTakesRowsBelowIt(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		everyClaimMeasured(e.q)
		now := e.clock.Unix()
		running := e.insertRow(t, row{queue: "default", attempts: 1, reservedAt: i64(now), availableAt: now - 10, createdAt: now - 10})
		soon := e.insertRow(t, row{queue: "default", availableAt: now + 2, createdAt: now})
		first, ready := e.delayedThenReady(t, now, 30)
		if got := e.claimIDs(t, 5); !slices.Equal(got, ready[:5]) {
			t.Fatalf("first claim took %v, want %v", got, ready[:5])
		}
		if b := e.bound(); b == nil || !b.costly || b.from != ready[0] {
			t.Fatalf("bound %+v, want from %d", b, ready[0])
		}
		// One queue fills the table: on MySQL/MariaDB the claims from the
		// start below read the primary key in id order, and must take
		// what Laravel's query takes.
		if b := e.bound(); b.primary != (e.engine == appconfig.EngineMySQL) {
			t.Fatalf("claims from the start along the primary key: %v on %s", b.primary, e.engine)
		}
		// 3 s on: the row due soon waits while rows above the bound are
		// left (within rescanEvery), then comes first when they run out.
		e.clock.Set(e.clock.Now().Add(3 * time.Second))
		if got := e.claimIDs(t, 20); !slices.Equal(got, ready[5:25]) {
			t.Fatalf("bounded claim took %v, want %v", got, ready[5:25])
		}
		if b := e.bound(); b.from != ready[5] {
			t.Fatalf("bound from %d, want %d", b.from, ready[5])
		}
		if got := e.claimIDs(t, 5); !slices.Equal(got, ready[25:]) {
			t.Fatalf("claim took %v, want %v", got, ready[25:])
		}
		if got := e.claimIDs(t, 5); !slices.Equal(got, []int64{soon}) {
			t.Fatalf("claim took %v once the rows above the bound ran out, want the row due soon %d", got, soon)
		}
		// 61 s on: the delayed rows below the bound are due; the claim
		// goes back to the start (rescanEvery passed) and takes them in id
		// order.
		e.clock.Set(e.clock.Now().Add(58 * time.Second))
		if got := e.claimIDs(t, 3); !slices.Equal(got, []int64{first, first + 1, first + 2}) {
			t.Fatalf("claim took %v, want the first delayed rows from %d", got, first)
		}
		// 100 s on: the running row's reservation expired (retry_after
		// 90); a claim from the start takes it again.
		e.clock.Set(e.clock.Now().Add(39 * time.Second))
		jobs, err := e.q.Claim(e.ctx, nil, 2, jobqueue.ClaimOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 || jobs[0].ID != running || jobs[0].Attempts != 2 {
			t.Fatalf("claim took %+v, want the expired reservation %d first", jobs, running)
		}
		// Everything else is still taken.
		for len(e.claimIDs(t, 500)) > 0 {
		}
		if n, err := e.q.CountClaimable(e.ctx, nil, jobqueue.ClaimOptions{}); err != nil || n != 0 {
			t.Fatalf("%d rows left claimable (%v) after the claims came back empty", n, err)
		}
	})
}

// Unreserve gives a row back below the bound: the next claim reads from
// the start.
func TestClaimBoundForgottenOnUnreserve(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		everyClaimMeasured(e.q)
		now := e.clock.Unix()
		_, ready := e.delayedThenReady(t, now, 10)
		jobs, err := e.q.Claim(e.ctx, nil, 2, jobqueue.ClaimOptions{})
		if err != nil || len(jobs) != 2 {
			t.Fatalf("claim: %v, %v", jobs, err)
		}
		if got := e.claimIDs(t, 2); !slices.Equal(got, ready[2:4]) {
			t.Fatalf("claim took %v, want %v", got, ready[2:4])
		}
		if b := e.bound(); b.from != ready[2] {
			t.Fatalf("bound %+v, want from %d", b, ready[2])
		}
		if err := e.q.Unreserve(e.ctx, jobs[0]); err != nil {
			t.Fatal(err)
		}
		if got := e.claimIDs(t, 1); !slices.Equal(got, []int64{ready[0]}) {
			t.Fatalf("claim after unreserve took %v, want %d", got, ready[0])
		}
	})
}
