package database

import (
	"fmt"
	"testing"

	"github.com/laraworker/laraworker/jobqueue"
)

// TestHooksGoOntoTheHooksQueuesTable: with a hooks queue on a table of
// its own (another database queue connection on the same database), a
// finish or a failure writes its hook jobs there, in its transaction, as
// pushRaw would (attempts 0, not reserved, available now), deciding them
// from the batch update it made: the builders see the batch as locked and
// the counts written. With --laravel-exact too.
func TestHooksGoOntoTheHooksQueuesTable(t *testing.T) {
	for _, exact := range []bool{false, true} {
		t.Run(fmt.Sprintf("exact=%v", exact), func(t *testing.T) {
			forEachEngine(t, func(t *testing.T, e *testEnv) {
				// The hooks connection's tables: another set on the same database.
				hcfg := engineConfig(t, e.engine, "")
				if e.engine == "sqlite" {
					hcfg.Database = e.cfg.Database
				}
				hooksTable := openEnv(t, e.engine, hcfg, Options{}).cfg.JobsTable
				q := openEnv(t, e.engine, e.cfg, Options{ExactStatements: exact,
					HooksQueue: &HooksQueue{Connection: "hooks", Table: hooksTable, Queue: "php-hooks"}})
				if c, queue, ok := q.q.HooksQueue(); c != "hooks" || queue != "php-hooks" || !ok {
					t.Fatalf("HooksQueue() = %s %s %v", c, queue, ok)
				}
				const batchID = "b-1"
				e.insertBatch(t, batchID, 2)
				var seen []jobqueue.BatchUpdate
				hooks := func(failure bool) *jobqueue.Hooks {
					h := &jobqueue.Hooks{
						BatchCallbacks: func(u jobqueue.BatchUpdate) ([]string, error) {
							seen = append(seen, u)
							if u.Counts.PendingJobs-u.Counts.FailedJobs == 0 {
								return []string{"finally"}, nil
							}
							return nil, nil
						},
						Batch: func(id string, which []string) ([]byte, error) {
							return fmt.Appendf(nil, `{"batch":%q,"which":%q}`, id, which), nil
						},
					}
					if failure {
						h.Failure = func(which []string) ([]byte, error) { return fmt.Appendf(nil, `{"failure":%q}`, which), nil }
					}
					return h
				}
				for i, failure := range []bool{false, true} {
					uuid := newUUID(t)
					e.insertRow(t, row{queue: "default", payload: testPayload(uuid, `App\Jobs\Member`), availableAt: e.clock.Unix()})
					job, err := q.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
					if err != nil || job == nil {
						t.Fatal(job, err)
					}
					f := jobqueue.Followup{Batch: &jobqueue.BatchEntry{ID: batchID, JobUUID: uuid, AllowFailures: true}, Hooks: hooks(failure)}
					if failure {
						err = q.q.Fail(e.ctx, *job, uuid, "E", f)
					} else {
						err = q.q.Finish(e.ctx, *job, f)
					}
					if err != nil {
						t.Fatalf("outcome %d: %v", i, err)
					}
				}
				if len(seen) != 2 || seen[0].Before.TotalJobs != 2 || seen[0].Counts != (jobqueue.BatchCounts{PendingJobs: 1}) ||
					seen[1].Before.PendingJobs != 1 || seen[1].Counts != (jobqueue.BatchCounts{PendingJobs: 1, FailedJobs: 1}) {
					t.Fatalf("the builders saw %+v", seen)
				}
				var got []string
				rows, err := q.q.db.QueryContext(e.ctx, fmt.Sprintf("select queue, attempts, reserved_at, available_at, payload from %s order by id", e.quoted(hooksTable)))
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				for rows.Next() {
					var queue, payload string
					var attempts, available int64
					var reserved any
					if err := rows.Scan(&queue, &attempts, &reserved, &available, &payload); err != nil {
						t.Fatal(err)
					}
					if queue != "php-hooks" || attempts != 0 || reserved != nil || available != e.clock.Unix() {
						t.Errorf("hook row: queue %s attempts %d reserved %v available %d", queue, attempts, reserved, available)
					}
					got = append(got, payload)
				}
				// The success triggered nothing; the failure named finally in its own hook job.
				if len(got) != 1 || got[0] != `{"failure":["finally"]}` {
					t.Errorf("hook jobs %q", got)
				}
				if n := len(e.allJobs(t)); n != 0 {
					t.Errorf("%d rows left in the jobs table: the hook jobs belong to the hooks table", n)
				}
			})
		})
	}
}
