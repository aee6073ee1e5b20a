package database

import (
	"strings"
	"testing"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// sessionCounters reads MariaDB/MySQL's statement counters of the pool's
// one connection (the test limits the pool to one).
func sessionCounters(t *testing.T, e *testEnv) map[string]int64 {
	t.Helper()
	rows, err := e.q.db.QueryContext(e.ctx, "show session status where variable_name in ('Com_begin', 'Com_rollback', 'Com_commit', 'Com_select')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			t.Fatal(err)
		}
		out[strings.ToLower(name)] = v
	}
	return out
}

// TestEmptyClaimLooksFirst: after a claim on a queue found nothing, the
// next claim there is one autocommitted select, with no transaction,
// while the queue stays empty; a job pushed meanwhile is claimed by the
// claim that follows the look, and a claim that found work is not
// preceded by one. MySQL/MariaDB (the claim is a transaction there).
func TestEmptyClaimLooksFirst(t *testing.T) {
	e := newEnv(t, appconfig.EngineMySQL)
	e.q.db.SetMaxOpenConns(1)
	var looks []bool
	e.q.testHookPeek = func(found bool) { looks = append(looks, found) }
	claim := func() *jobqueue.JobRow {
		t.Helper()
		j, err := e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}

	if j := claim(); j != nil || len(looks) != 0 {
		t.Fatalf("first claim on an empty queue: job %+v, looks %v; want none, no look (not yet known empty)", j, looks)
	}
	before := sessionCounters(t, e)
	for range 3 {
		if j := claim(); j != nil {
			t.Fatalf("claim on an empty queue returned %+v", j)
		}
	}
	after := sessionCounters(t, e)
	if len(looks) != 3 || looks[0] || looks[2] {
		t.Fatalf("looks = %v, want three that found nothing", looks)
	}
	for _, c := range []string{"com_begin", "com_rollback", "com_commit"} {
		if after[c] != before[c] {
			t.Errorf("%s went from %d to %d over three empty claims after an empty one: a transaction ran", c, before[c], after[c])
		}
	}
	// The three looks, and show status's own select of the counters.
	if got := after["com_select"] - before["com_select"]; got > 4 {
		t.Errorf("%d selects over three empty claims, want one each", got)
	}

	now := e.clock.Unix()
	id := e.insertRow(t, row{queue: "default", availableAt: now, createdAt: now})
	looks = nil
	j := claim()
	if j == nil || j.ID != id || j.Attempts != 1 {
		t.Fatalf("claim after a push: %+v, want job %d at attempt 1", j, id)
	}
	if len(looks) != 1 || !looks[0] {
		t.Fatalf("looks = %v, want one that found the job", looks)
	}
	looks = nil
	if j := claim(); j != nil || len(looks) != 0 {
		t.Fatalf("claim after one that found work: job %+v, looks %v; want none and no look", j, looks)
	}
	if j := claim(); j != nil || len(looks) != 1 || looks[0] {
		t.Fatalf("claim after an empty one: job %+v, looks %v; want none after one look", j, looks)
	}
}

// TestExactClaimsDoNotLook: --laravel-exact runs Laravel's statements and
// nothing else, empty claims included.
func TestExactClaimsDoNotLook(t *testing.T) {
	e := openEnv(t, appconfig.EngineMySQL, engineConfig(t, appconfig.EngineMySQL, t.TempDir()), Options{ExactStatements: true})
	looked := false
	e.q.testHookPeek = func(bool) { looked = true }
	for range 3 {
		if j, err := e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{}); err != nil || j != nil {
			t.Fatalf("claim: %+v %v", j, err)
		}
	}
	if looked {
		t.Fatal("an exact claim looked before claiming")
	}
}
